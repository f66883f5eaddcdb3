/*
 * Public keys (PEM SPKI, JWK and JWK Set) and the signature checks, with OpenSSL 3's libcrypto.
 * A key verifies exactly one algorithm: Ed25519 EdDSA, P-256 ES256, or RSA (2048 bits or more)
 * PS256 with a 32-byte salt.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include "internal.h"

#define MIN_RSA_MODULUS_BITS 2048
#define ES256_SIGNATURE_LENGTH 64
#define PSS_SALT_LENGTH 32

typedef struct key {
  licv_key_type type;
  char *kid; /* NULL when none */
  size_t kid_length;
  EVP_PKEY *pkey;
} key;

struct licv_keys {
  size_t count;
  key *items;
};

static const char *alg_of(licv_key_type type) {
  switch (type) {
    case LICV_KEY_ED25519: return "EdDSA";
    case LICV_KEY_ECDSA_P256: return "ES256";
    case LICV_KEY_RSA: return "PS256";
  }
  return NULL;
}

const char *licv_key_type_name(licv_key_type type) {
  switch (type) {
    case LICV_KEY_ED25519: return "ed25519";
    case LICV_KEY_ECDSA_P256: return "ecdsa-p256";
    case LICV_KEY_RSA: return "rsa";
  }
  return "unknown";
}

void licv_keys_free(licv_keys *keys) {
  size_t i;
  if (keys == NULL) return;
  for (i = 0; i < keys->count; i++) {
    EVP_PKEY_free(keys->items[i].pkey);
    free(keys->items[i].kid);
  }
  free(keys->items);
  free(keys);
}

size_t licv_keys_count(const licv_keys *keys) { return keys == NULL ? 0 : keys->count; }

licv_key_type licv_keys_type(const licv_keys *keys, size_t index) {
  if (keys == NULL || index >= keys->count) return (licv_key_type)0;
  return keys->items[index].type;
}

const char *licv_keys_alg(const licv_keys *keys, size_t index) {
  if (keys == NULL || index >= keys->count) return NULL;
  return alg_of(keys->items[index].type);
}

const char *licv_keys_kid(const licv_keys *keys, size_t index) {
  if (keys == NULL || index >= keys->count) return NULL;
  return keys->items[index].kid;
}

static licv_keys *new_keys(size_t count) {
  licv_keys *keys = calloc(1, sizeof(licv_keys));
  if (keys == NULL) return NULL;
  keys->items = calloc(count == 0 ? 1 : count, sizeof(key));
  if (keys->items == NULL) {
    free(keys);
    return NULL;
  }
  return keys;
}

/* Whether an RSA key is big enough. */
static int rsa_size_ok(EVP_PKEY *pkey) {
  return EVP_PKEY_get_bits(pkey) >= MIN_RSA_MODULUS_BITS;
}

/* ---- PEM (SPKI) ---------------------------------------------------------------------------- */

typedef struct der {
  const uint8_t *bytes;
  size_t length;
  size_t at;
} der;

/* The next element's tag and value; 0 when it runs past the end. */
static int der_next(der *d, int *tag, const uint8_t **value, size_t *value_length) {
  size_t length;
  if (d->at >= d->length) return 0;
  *tag = d->bytes[d->at++];
  if (d->at >= d->length) return 0;
  length = d->bytes[d->at++];
  if (length & 0x80) {
    size_t count = length & 0x7F, i;
    if (count == 0 || count > 3) return 0;
    length = 0;
    for (i = 0; i < count; i++) {
      if (d->at >= d->length) return 0;
      length = (length << 8) | d->bytes[d->at++];
    }
  }
  if (length > d->length - d->at) return 0;
  *value = d->bytes + d->at;
  *value_length = length;
  d->at += length;
  return 1;
}

static int der_read(der *d, int expected_tag, der *inner) {
  int tag;
  const uint8_t *value;
  size_t length;
  if (!der_next(d, &tag, &value, &length) || tag != expected_tag) return 0;
  inner->bytes = value;
  inner->length = length;
  inner->at = 0;
  return 1;
}

static int bytes_are(const der *d, const uint8_t *expected, size_t length) {
  return d->length == length && memcmp(d->bytes, expected, length) == 0;
}

/*
 * The key type an SPKI's AlgorithmIdentifier names: SEQUENCE { SEQUENCE { OID, parameters? },
 * BIT STRING }. 0 when it is not an SPKI of Ed25519, EC P-256 or rsaEncryption.
 */
static licv_key_type spki_key_type(const uint8_t *bytes, size_t length) {
  static const uint8_t ED25519[] = {0x2b, 0x65, 0x70};
  static const uint8_t EC_PUBLIC_KEY[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};
  static const uint8_t P256[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
  static const uint8_t RSA_ENCRYPTION[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
  der whole = {bytes, length, 0}, spki, algorithm, oid, parameter;
  int tag;
  const uint8_t *value;
  size_t value_length;
  if (!der_read(&whole, 0x30, &spki) || whole.at != whole.length) return 0;
  if (!der_read(&spki, 0x30, &algorithm) || !der_read(&algorithm, 0x06, &oid)) return 0;
  if (bytes_are(&oid, ED25519, sizeof ED25519)) return LICV_KEY_ED25519;
  if (bytes_are(&oid, RSA_ENCRYPTION, sizeof RSA_ENCRYPTION)) return LICV_KEY_RSA;
  if (bytes_are(&oid, EC_PUBLIC_KEY, sizeof EC_PUBLIC_KEY)) {
    if (algorithm.at == algorithm.length) return 0;
    if (!der_next(&algorithm, &tag, &value, &value_length) || tag != 0x06) return 0;
    parameter.bytes = value;
    parameter.length = value_length;
    parameter.at = 0;
    if (bytes_are(&parameter, P256, sizeof P256)) return LICV_KEY_ECDSA_P256;
  }
  return 0;
}

static int is_base64_or_line(uint8_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '=' || c == '\r' || c == '\n';
}

/* The type EVP_PKEY has for a key type. */
static int evp_id_of(licv_key_type type) {
  switch (type) {
    case LICV_KEY_ED25519: return EVP_PKEY_ED25519;
    case LICV_KEY_ECDSA_P256: return EVP_PKEY_EC;
    case LICV_KEY_RSA: return EVP_PKEY_RSA;
  }
  return 0;
}

/* A key OpenSSL read, checked to be the type its SPKI or JWK said. */
static int key_checks_out(EVP_PKEY *pkey, licv_key_type type) {
  if (EVP_PKEY_get_base_id(pkey) != evp_id_of(type)) return 0;
  if (type == LICV_KEY_RSA) return rsa_size_ok(pkey);
  if (type == LICV_KEY_ECDSA_P256) {
    char group[64];
    size_t group_length = 0;
    if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group,
                                        &group_length))
      return 0;
    if (strcmp(group, "prime256v1") != 0 && strcmp(group, "P-256") != 0) return 0;
  }
  return 1;
}

static licv_status import_pem(const char *pem, size_t length, key *out) {
  static const char BEGIN[] = "-----BEGIN PUBLIC KEY-----";
  static const char END[] = "-----END PUBLIC KEY-----";
  const uint8_t *s = (const uint8_t *)pem;
  size_t start, end, at, body_start, i;
  licvi_arena *arena;
  char *body;
  size_t body_length = 0, der_length = 0;
  uint8_t *der_bytes;
  licv_key_type type;
  const unsigned char *cursor;
  EVP_PKEY *pkey;
  licv_status status = LICV_E_INVALID_KEY;

  if (!licvi_utf8_valid(s, length)) return LICV_E_INVALID_KEY;
  licvi_trim(s, length, &start, &end);
  /* One "PUBLIC KEY" block: BEGIN, a line break, base64 lines, END, and nothing else. */
  if (end - start < sizeof BEGIN - 1 || memcmp(s + start, BEGIN, sizeof BEGIN - 1) != 0)
    return LICV_E_INVALID_KEY;
  at = start + sizeof BEGIN - 1;
  if (at < end && s[at] == '\r') at++;
  if (at >= end || s[at] != '\n') return LICV_E_INVALID_KEY;
  at++;
  body_start = at;
  while (at < end && is_base64_or_line(s[at])) at++;
  if (at == body_start) return LICV_E_INVALID_KEY;
  if (end - at != sizeof END - 1 || memcmp(s + at, END, sizeof END - 1) != 0)
    return LICV_E_INVALID_KEY;

  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  body = licvi_alloc(arena, at - body_start + 1);
  if (body == NULL) {
    licvi_arena_free(arena);
    return LICV_E_NO_MEMORY;
  }
  for (i = body_start; i < at; i++) {
    if (s[i] != '\r' && s[i] != '\n') body[body_length++] = (char)s[i];
  }
  der_bytes = licvi_base64_decode(arena, body, body_length, &der_length);
  type = der_bytes == NULL ? (licv_key_type)0 : spki_key_type(der_bytes, der_length);
  if (type != 0 && der_length <= 0x7FFFFFFF) {
    cursor = der_bytes;
    pkey = d2i_PUBKEY(NULL, &cursor, (long)der_length);
    if (pkey != NULL && cursor == der_bytes + der_length && key_checks_out(pkey, type)) {
      out->type = type;
      out->pkey = pkey;
      out->kid = NULL;
      status = LICV_OK;
    } else {
      EVP_PKEY_free(pkey);
    }
  }
  licvi_arena_free(arena);
  return status;
}

licv_status licv_keys_from_pem(const char *pem, size_t length, licv_keys **out) {
  licv_keys *keys;
  licv_status status;
  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (pem == NULL && length > 0) return LICV_E_INVALID_ARGUMENT;
  keys = new_keys(1);
  if (keys == NULL) return LICV_E_NO_MEMORY;
  ERR_set_mark();
  status = import_pem(pem, length, &keys->items[0]);
  ERR_pop_to_mark();
  if (status != LICV_OK) {
    licv_keys_free(keys);
    return status;
  }
  keys->count = 1;
  *out = keys;
  return LICV_OK;
}

/* ---- JWK ----------------------------------------------------------------------------------- */

/* A member's canonical base64url bytes; NULL when missing, not a string or not canonical. */
static const uint8_t *member_bytes(licvi_arena *arena, const licvi_json *jwk, const char *name,
                                   size_t *length) {
  const licvi_json *value = licvi_json_get(jwk, name);
  if (!licvi_json_is_string(value)) return NULL;
  return licvi_base64url_decode(arena, value->string, value->length, length);
}

static EVP_PKEY *from_params(const char *type_name, OSSL_PARAM_BLD *builder) {
  OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(builder);
  EVP_PKEY_CTX *ctx = NULL;
  EVP_PKEY *pkey = NULL;
  if (params == NULL) return NULL;
  ctx = EVP_PKEY_CTX_new_from_name(NULL, type_name, NULL);
  if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) <= 0 ||
      EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
    EVP_PKEY_free(pkey);
    pkey = NULL;
  }
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_free(params);
  return pkey;
}

/* Whether the public key is a valid one (a point on the curve, an RSA modulus that is odd...). */
static int public_check(EVP_PKEY *pkey) {
  EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL);
  int ok = ctx != NULL && EVP_PKEY_public_check(ctx) == 1;
  EVP_PKEY_CTX_free(ctx);
  return ok;
}

static EVP_PKEY *jwk_material(licvi_arena *arena, const licvi_json *jwk, licv_key_type type) {
  EVP_PKEY *pkey = NULL;
  if (type == LICV_KEY_ED25519) {
    size_t x_length = 0;
    const uint8_t *x = member_bytes(arena, jwk, "x", &x_length);
    if (x == NULL || x_length != 32) return NULL;
    return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, x_length);
  }
  if (type == LICV_KEY_ECDSA_P256) {
    size_t x_length = 0, y_length = 0;
    const uint8_t *x = member_bytes(arena, jwk, "x", &x_length);
    const uint8_t *y = member_bytes(arena, jwk, "y", &y_length);
    uint8_t point[65];
    OSSL_PARAM_BLD *builder;
    if (x == NULL || y == NULL || x_length != 32 || y_length != 32) return NULL;
    point[0] = 0x04;
    memcpy(point + 1, x, 32);
    memcpy(point + 33, y, 32);
    builder = OSSL_PARAM_BLD_new();
    if (builder == NULL) return NULL;
    if (OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) &&
        OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof point))
      pkey = from_params("EC", builder);
    OSSL_PARAM_BLD_free(builder);
  } else if (type == LICV_KEY_RSA) {
    size_t n_length = 0, e_length = 0;
    const uint8_t *n = member_bytes(arena, jwk, "n", &n_length);
    const uint8_t *e = member_bytes(arena, jwk, "e", &e_length);
    BIGNUM *bn_n, *bn_e;
    OSSL_PARAM_BLD *builder;
    if (n == NULL || e == NULL || n_length == 0 || e_length == 0 || n_length > 2048 ||
        e_length > 2048)
      return NULL;
    bn_n = BN_bin2bn(n, (int)n_length, NULL);
    bn_e = BN_bin2bn(e, (int)e_length, NULL);
    builder = OSSL_PARAM_BLD_new();
    if (bn_n != NULL && bn_e != NULL && builder != NULL && !BN_is_zero(bn_e) &&
        OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, bn_n) &&
        OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, bn_e))
      pkey = from_params("RSA", builder);
    OSSL_PARAM_BLD_free(builder);
    BN_free(bn_n);
    BN_free(bn_e);
  }
  if (pkey != NULL && !public_check(pkey)) {
    EVP_PKEY_free(pkey);
    pkey = NULL;
  }
  return pkey;
}

static licv_status import_jwk(licvi_arena *arena, const licvi_json *jwk, key *out) {
  static const char *const PRIVATE_MEMBERS[] = {"d", "p", "q", "dp", "dq", "qi", "k"};
  const licvi_json *kty, *crv, *alg, *use, *key_ops, *kid;
  licv_key_type type;
  EVP_PKEY *pkey;
  size_t i;
  if (!licvi_json_is_object(jwk)) return LICV_E_INVALID_KEY;
  /* A private (or secret) key handed to a verifier is a mistake worth refusing. */
  for (i = 0; i < sizeof PRIVATE_MEMBERS / sizeof PRIVATE_MEMBERS[0]; i++) {
    if (licvi_json_get(jwk, PRIVATE_MEMBERS[i]) != NULL) return LICV_E_INVALID_KEY;
  }
  kty = licvi_json_get(jwk, "kty");
  crv = licvi_json_get(jwk, "crv");
  if (licvi_json_string_equals(kty, "OKP") && licvi_json_string_equals(crv, "Ed25519"))
    type = LICV_KEY_ED25519;
  else if (licvi_json_string_equals(kty, "EC") && licvi_json_string_equals(crv, "P-256"))
    type = LICV_KEY_ECDSA_P256;
  else if (licvi_json_string_equals(kty, "RSA"))
    type = LICV_KEY_RSA;
  else
    return LICV_E_INVALID_KEY;
  alg = licvi_json_get(jwk, "alg");
  if (alg != NULL && !licvi_json_string_equals(alg, alg_of(type)) &&
      !(type == LICV_KEY_ED25519 && licvi_json_string_equals(alg, "Ed25519")))
    return LICV_E_INVALID_KEY;
  use = licvi_json_get(jwk, "use");
  if (use != NULL && !licvi_json_string_equals(use, "sig")) return LICV_E_INVALID_KEY;
  key_ops = licvi_json_get(jwk, "key_ops");
  if (key_ops != NULL) {
    const licvi_json *op;
    int verify = 0;
    if (key_ops->type != LICVI_JSON_ARRAY) return LICV_E_INVALID_KEY;
    for (op = key_ops->first; op != NULL; op = op->next) {
      if (licvi_json_string_equals(op, "verify")) verify = 1;
    }
    if (!verify) return LICV_E_INVALID_KEY;
  }
  kid = licvi_json_get(jwk, "kid");
  if (kid != NULL && kid->type != LICVI_JSON_STRING) return LICV_E_INVALID_KEY;
  pkey = jwk_material(arena, jwk, type);
  if (pkey == NULL) return LICV_E_INVALID_KEY;
  if (!key_checks_out(pkey, type)) {
    EVP_PKEY_free(pkey);
    return LICV_E_INVALID_KEY;
  }
  if (kid != NULL) {
    out->kid = malloc(kid->length + 1);
    if (out->kid == NULL) {
      EVP_PKEY_free(pkey);
      return LICV_E_NO_MEMORY;
    }
    memcpy(out->kid, kid->string, kid->length + 1);
    out->kid_length = kid->length;
  }
  out->type = type;
  out->pkey = pkey;
  return LICV_OK;
}

licv_status licv_keys_from_jwk(const char *json, size_t length, licv_keys **out) {
  licvi_arena *arena;
  const licvi_json *root, *set, *item;
  licv_keys *keys = NULL;
  licv_status status = LICV_OK;
  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  *out = NULL;
  if (json == NULL && length > 0) return LICV_E_INVALID_ARGUMENT;
  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  ERR_set_mark();
  root = licvi_json_parse(arena, json, length);
  set = licvi_json_get(root, "keys");
  if (!licvi_json_is_object(root)) {
    status = LICV_E_INVALID_KEY;
  } else if (set != NULL && set->type == LICVI_JSON_ARRAY) {
    /* A JWK Set: every key must be usable, and there must be one. */
    if (set->length == 0) {
      status = LICV_E_INVALID_KEY;
    } else if ((keys = new_keys(set->length)) == NULL) {
      status = LICV_E_NO_MEMORY;
    } else {
      for (item = set->first; item != NULL && status == LICV_OK; item = item->next) {
        status = import_jwk(arena, item, &keys->items[keys->count]);
        if (status == LICV_OK) keys->count++;
      }
    }
  } else if ((keys = new_keys(1)) == NULL) {
    status = LICV_E_NO_MEMORY;
  } else {
    status = import_jwk(arena, root, &keys->items[0]);
    if (status == LICV_OK) keys->count = 1;
  }
  licvi_arena_free(arena);
  ERR_pop_to_mark();
  if (status != LICV_OK) {
    licv_keys_free(keys);
    return status;
  }
  *out = keys;
  return LICV_OK;
}

/* ---- signatures ---------------------------------------------------------------------------- */

static int verify_with(const licvi_jws *jws, const key *k) {
  const licvi_json *alg = licvi_json_get(jws->header, "alg");
  EVP_MD_CTX *md = NULL;
  EVP_PKEY_CTX *pctx = NULL;
  const uint8_t *signature = jws->signature;
  size_t signature_length = jws->signature_length;
  unsigned char *der_signature = NULL;
  int ok = 0;
  /* No JWS extension is understood, so a critical one invalidates the document (RFC 7515). */
  if (licvi_json_get(jws->header, "crit") != NULL) return 0;
  if (!licvi_json_string_equals(alg, alg_of(k->type)) &&
      !(k->type == LICV_KEY_ED25519 && licvi_json_string_equals(alg, "Ed25519")))
    return 0;
  if (k->type == LICV_KEY_ECDSA_P256) {
    /* JWS ECDSA signatures are R||S, 32 bytes each; OpenSSL reads DER. A DER signature is refused. */
    ECDSA_SIG *sig;
    BIGNUM *r, *s;
    int der_length;
    if (signature_length != ES256_SIGNATURE_LENGTH) return 0;
    sig = ECDSA_SIG_new();
    r = BN_bin2bn(signature, 32, NULL);
    s = BN_bin2bn(signature + 32, 32, NULL);
    if (sig == NULL || r == NULL || s == NULL || !ECDSA_SIG_set0(sig, r, s)) {
      ECDSA_SIG_free(sig);
      BN_free(r);
      BN_free(s);
      return 0;
    }
    der_length = i2d_ECDSA_SIG(sig, &der_signature);
    ECDSA_SIG_free(sig);
    if (der_length <= 0) return 0;
    signature = der_signature;
    signature_length = (size_t)der_length;
  }
  md = EVP_MD_CTX_new();
  if (md == NULL) goto done;
  if (k->type == LICV_KEY_ED25519) {
    if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, k->pkey) != 1) goto done;
  } else {
    if (EVP_DigestVerifyInit(md, &pctx, EVP_sha256(), NULL, k->pkey) != 1) goto done;
    if (k->type == LICV_KEY_RSA) {
      if (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) <= 0 ||
          EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) <= 0 ||
          EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, PSS_SALT_LENGTH) <= 0)
        goto done;
    }
  }
  ok = EVP_DigestVerify(md, signature, signature_length, jws->signing_input,
                        jws->signing_input_length) == 1;
done:
  EVP_MD_CTX_free(md);
  OPENSSL_free(der_signature);
  return ok;
}

/*
 * The keys that may have signed: the one whose kid the header names, if the set has it;
 * otherwise every key without a kid. None to try is an unknown key.
 */
licvi_signature licvi_jws_verify(const licvi_jws *jws, const licv_keys *keys) {
  const licvi_json *kid = licvi_json_get(jws->header, "kid");
  const key *named = NULL;
  size_t i, tried = 0;
  licvi_signature verdict = LICVI_SIGNATURE_INVALID;
  ERR_set_mark();
  if (licvi_json_is_string(kid)) {
    for (i = 0; i < keys->count && named == NULL; i++) {
      const key *k = &keys->items[i];
      if (k->kid != NULL && k->kid_length == kid->length &&
          memcmp(k->kid, kid->string, kid->length) == 0)
        named = k;
    }
  }
  if (named != NULL) {
    if (verify_with(jws, named)) verdict = LICVI_SIGNATURE_VALID;
  } else {
    for (i = 0; i < keys->count && verdict != LICVI_SIGNATURE_VALID; i++) {
      if (keys->items[i].kid != NULL) continue;
      tried++;
      if (verify_with(jws, &keys->items[i])) verdict = LICVI_SIGNATURE_VALID;
    }
    if (tried == 0) verdict = LICVI_SIGNATURE_UNKNOWN_KEY;
  }
  /* OpenSSL keeps errors in a per-thread queue: a failed check leaves none of its own behind. */
  ERR_pop_to_mark();
  return verdict;
}
