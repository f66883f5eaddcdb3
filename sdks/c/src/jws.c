/* Compact JWS decoding, shared by every document the platform signs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int is_base64url_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

/* A segment that decodes to a JSON object; NULL otherwise (or when out of memory). */
static const licvi_json *json_object(licvi_arena *arena, const char *segment, size_t length,
                                     const char **text, size_t *text_length) {
  size_t bytes_length = 0;
  const uint8_t *bytes = licvi_base64url_decode(arena, segment, length, &bytes_length);
  const licvi_json *value;
  if (bytes == NULL) return NULL;
  /* The parser checks that the bytes are UTF-8; a byte order mark is not JSON. */
  value = licvi_json_parse(arena, (const char *)bytes, bytes_length);
  if (!licvi_json_is_object(value)) return NULL;
  if (text != NULL) *text = (const char *)bytes;
  if (text_length != NULL) *text_length = bytes_length;
  return value;
}

int licvi_jws_decode(licvi_arena *arena, const char *text, size_t length, const uint8_t *detached,
                     size_t detached_length, int is_detached, licvi_jws *out) {
  size_t dots[2], count = 0, i;
  const char *header_segment, *payload_segment, *signature_segment;
  size_t header_length, payload_length, signature_length;
  const licvi_json *alg;
  memset(out, 0, sizeof *out);
  for (i = 0; i < length; i++) {
    if (text[i] == '.') {
      if (count == 2) return 0;
      dots[count++] = i;
    } else if (!is_base64url_char(text[i])) {
      /* Only the base64url alphabet is canonical: anything else is malformed anyway. */
      return 0;
    }
  }
  if (count != 2) return 0;
  header_segment = text;
  header_length = dots[0];
  payload_segment = text + dots[0] + 1;
  payload_length = dots[1] - dots[0] - 1;
  signature_segment = text + dots[1] + 1;
  signature_length = length - dots[1] - 1;

  out->header = json_object(arena, header_segment, header_length, NULL, NULL);
  out->signature =
      licvi_base64url_decode(arena, signature_segment, signature_length, &out->signature_length);
  alg = licvi_json_get(out->header, "alg");
  if (out->header == NULL || out->signature == NULL || !licvi_json_is_string(alg)) return 0;
  if (is_detached) {
    /* RFC 7515 Appendix F: the signing input is made with the bytes carried elsewhere. */
    size_t encoded_length = 0;
    char *encoded;
    uint8_t *input;
    if (payload_length != 0) return 0;
    encoded = licvi_base64url_encode(arena, detached, detached_length, &encoded_length);
    if (encoded == NULL) return -1;
    input = licvi_alloc(arena, header_length + 1 + encoded_length);
    if (input == NULL) return -1;
    memcpy(input, header_segment, header_length);
    input[header_length] = '.';
    memcpy(input + header_length + 1, encoded, encoded_length);
    out->signing_input = input;
    out->signing_input_length = header_length + 1 + encoded_length;
    return 1;
  }
  out->payload = json_object(arena, payload_segment, payload_length, &out->payload_text,
                             &out->payload_text_length);
  if (out->payload == NULL) return 0;
  out->signing_input = (const uint8_t *)text;
  out->signing_input_length = dots[1];
  return 1;
}

/* ---- what every verifier shares ------------------------------------------------------------ */

void licvi_push(licvi_codes *codes, licv_error_code code) {
  size_t i;
  for (i = 0; i < codes->count; i++) {
    if (codes->codes[i] == code) return;
  }
  if (codes->count < LICV_MAX_ERRORS) codes->codes[codes->count++] = code;
}

int licvi_tolerance_ok(double seconds) { return isfinite(seconds) && seconds >= 0; }

void licv_free(void *memory) { free(memory); }

const char *licv_status_name(licv_status status) {
  switch (status) {
    case LICV_OK: return "ok";
    case LICV_E_INVALID_KEY: return "invalid_key";
    case LICV_E_INVALID_ARGUMENT: return "invalid_argument";
    case LICV_E_NO_MEMORY: return "no_memory";
  }
  return "unknown";
}

const char *licv_error_code_name(licv_error_code code) {
  switch (code) {
    case LICV_MALFORMED: return "malformed";
    case LICV_UNSIGNED: return "unsigned";
    case LICV_UNKNOWN_KEY: return "unknown_key";
    case LICV_SIGNATURE_INVALID: return "signature_invalid";
    case LICV_PRODUCT_MISMATCH: return "product_mismatch";
    case LICV_NOT_YET_VALID: return "not_yet_valid";
    case LICV_EXPIRED: return "expired";
    case LICV_FILE_EXPIRED: return "file_expired";
    case LICV_FINGERPRINT_MISMATCH: return "fingerprint_mismatch";
    case LICV_VERSION_REGRESSION: return "version_regression";
    case LICV_VERSION_GAP: return "version_gap";
    case LICV_NONCE_MISMATCH: return "nonce_mismatch";
    case LICV_MACHINE_KEY_MISMATCH: return "machine_key_mismatch";
    case LICV_TOO_OLD: return "too_old";
    case LICV_NOT_YET_SIGNED: return "not_yet_signed";
  }
  return "unknown";
}

const char *licv_error_message(licv_error_code code) {
  switch (code) {
    case LICV_MALFORMED: return "The document is not one the platform signs, or is damaged";
    case LICV_UNSIGNED: return "The answer carries no Licensing-Signature";
    case LICV_UNKNOWN_KEY: return "The document was signed by a key this key set does not hold";
    case LICV_SIGNATURE_INVALID: return "The signature does not verify with the key";
    case LICV_PRODUCT_MISMATCH: return "The document belongs to another product";
    case LICV_NOT_YET_VALID: return "The document is not valid yet";
    case LICV_EXPIRED: return "The document has expired";
    case LICV_FILE_EXPIRED: return "The license file has expired: check it out again";
    case LICV_FINGERPRINT_MISMATCH: return "The document is bound to another machine";
    case LICV_VERSION_REGRESSION: return "The list is older than the one held";
    case LICV_VERSION_GAP: return "The delta does not start from the list held: fetch the full list";
    case LICV_NONCE_MISMATCH: return "The document answers another request (another nonce)";
    case LICV_MACHINE_KEY_MISMATCH: return "The activation was made for another machine's key";
    case LICV_TOO_OLD: return "The signature is older than the maximum age";
    case LICV_NOT_YET_SIGNED: return "The signature is dated in the future";
  }
  return "Unknown error code";
}
