/*
 * The licensing platform's C SDK: offline verification of the documents the platform signs.
 *
 * It verifies license files (and checked-out license files), revocation lists and their deltas,
 * signed answers and activation files, with a product's public key. It never reaches the
 * network. It answers the same verdicts and the same error codes as the JavaScript SDK.
 *
 * Memory: every object this library returns is freed by the one function named for it. A result
 * owns every string it points to: they stay readable until the result is freed. The library
 * keeps no global state. A key set is read-only once made: threads may share it.
 *
 * Strings are UTF-8 and end with a NUL byte. A JSON string that holds U+0000 still ends at its
 * first NUL byte for C's string functions.
 */
#ifndef LICENSING_VERIFIER_H
#define LICENSING_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LICV_VERSION "0.1.0"

/* ---------------------------------------------------------------------------------------------
 * Status: whether a call could run. A bad document is not a failed call: it is a result that is
 * not valid, with its error codes.
 * ------------------------------------------------------------------------------------------- */

typedef enum licv_status {
  LICV_OK = 0,
  /* The public key is refused: not a public key, or of a kind the platform never signs with. */
  LICV_E_INVALID_KEY = 1,
  /* A NULL where a value is needed, or an option out of range (a negative tolerance, a NaN time). */
  LICV_E_INVALID_ARGUMENT = 2,
  LICV_E_NO_MEMORY = 3
} licv_status;

/* The status's name, such as "invalid_key". Never NULL. */
const char *licv_status_name(licv_status status);

/* ---------------------------------------------------------------------------------------------
 * Error codes: why a document is not valid. The names are the JavaScript SDK's codes.
 * ------------------------------------------------------------------------------------------- */

typedef enum licv_error_code {
  LICV_MALFORMED = 1,
  LICV_UNSIGNED,
  LICV_UNKNOWN_KEY,
  LICV_SIGNATURE_INVALID,
  LICV_PRODUCT_MISMATCH,
  LICV_NOT_YET_VALID,
  LICV_EXPIRED,
  LICV_FILE_EXPIRED,
  LICV_FINGERPRINT_MISMATCH,
  LICV_VERSION_REGRESSION,
  LICV_VERSION_GAP,
  LICV_NONCE_MISMATCH,
  LICV_MACHINE_KEY_MISMATCH,
  LICV_TOO_OLD,
  LICV_NOT_YET_SIGNED
} licv_error_code;

/* The code's name, such as "signature_invalid". "unknown" for a value not in the enum. */
const char *licv_error_code_name(licv_error_code code);

/* A sentence that says what the code means. Never NULL. */
const char *licv_error_message(licv_error_code code);

/* No result holds more error codes than this. */
#define LICV_MAX_ERRORS 8

/* Frees memory this library handed over with "free with licv_free". NULL is ignored. */
void licv_free(void *memory);

/* ---------------------------------------------------------------------------------------------
 * Public keys
 *
 * The key decides the algorithm: Ed25519 verifies EdDSA, P-256 verifies ES256, and RSA of 2048
 * bits or more verifies PS256. A document naming another algorithm fails its signature.
 * ------------------------------------------------------------------------------------------- */

typedef struct licv_keys licv_keys;

typedef enum licv_key_type {
  LICV_KEY_ED25519 = 1,
  LICV_KEY_ECDSA_P256 = 2,
  LICV_KEY_RSA = 3
} licv_key_type;

/*
 * Reads one PEM "PUBLIC KEY" block (SPKI). Whitespace around it is allowed, nothing else.
 * LICV_E_INVALID_KEY when the text is refused. Free the keys with licv_keys_free.
 */
licv_status licv_keys_from_pem(const char *pem, size_t length, licv_keys **out);

/*
 * Reads the JSON text of a JWK, or of a JWK Set (an object whose "keys" is an array). A set
 * with no keys, or with any refused key, is refused whole. Free the keys with licv_keys_free.
 */
licv_status licv_keys_from_jwk(const char *json, size_t length, licv_keys **out);

/* Frees keys. NULL is ignored. */
void licv_keys_free(licv_keys *keys);

/* How many keys the set holds. */
size_t licv_keys_count(const licv_keys *keys);

/* The type of the key at index; 0 when index is out of range. */
licv_key_type licv_keys_type(const licv_keys *keys, size_t index);

/* The one algorithm the key verifies: "EdDSA", "ES256" or "PS256"; NULL when out of range. */
const char *licv_keys_alg(const licv_keys *keys, size_t index);

/* The key's kid, or NULL when it has none (a PEM never has one). Owned by the key set. */
const char *licv_keys_kid(const licv_keys *keys, size_t index);

/* "ed25519", "ecdsa-p256" or "rsa"; "unknown" otherwise. */
const char *licv_key_type_name(licv_key_type type);

/* ---------------------------------------------------------------------------------------------
 * License files
 * ------------------------------------------------------------------------------------------- */

typedef struct licv_license_options {
  /* Nonzero: check at `now`. Zero: check at the current time. */
  int use_now;
  /* The time to check at, in Unix seconds. */
  double now;
  /* The product the license must be for; NULL: not checked. */
  const char *product_id;
  /* This machine's fingerprint; NULL: not checked. */
  const char *fingerprint;
  /* Leeway for a skewed clock, in seconds, at both ends of the validity window (default 0). */
  double clock_tolerance_seconds;
} licv_license_options;

/* Sets the defaults: the current time, no product, no fingerprint, no tolerance. */
void licv_license_options_init(licv_license_options *options);

/* What a license file says. Times are ISO 8601 as JavaScript writes them (2027-03-01T12:00:00.000Z). */
typedef struct licv_license {
  const char *license_id;      /* jti */
  const char *serial;          /* sub */
  const char *organization_id; /* iss */
  const char *product_id;
  const char *product_code;
  const char *license_type; /* perpetual, subscription, trial, node_locked or floating */
  const char *customer_id;    /* NULL when null */
  const char *customer_email; /* NULL when null */
  const char *const *features;
  size_t feature_count;
  /* The entitlement codes, sorted as signed; none when the file carries none. */
  const char *const *entitlements;
  size_t entitlement_count;
  int64_t max_seats;
  /* The machine a node-locked license is bound to; NULL when hardware_binding is null. */
  const char *hardware_binding_fingerprint;
  /* A checkout file of an activation: the machine it is bound to; NULL otherwise. */
  const char *fingerprint;
  const char *valid_from;
  const char *valid_until; /* NULL for a license that never ends */
  const char *issued_at;   /* iat */
  const char *expires_at;  /* exp; NULL when the file has none */
  int64_t issued_at_seconds;
  int64_t not_before_seconds;
  int has_expiry;             /* whether the file has an exp */
  int64_t expires_at_seconds; /* exp when has_expiry */
  /* The license has ended. */
  int is_expired;
  /* A checkout file past its own expiry: check out again. */
  int is_file_expired;
  /* A checkout file's policy limits, as compact JSON text; NULL when the file has none. */
  const char *policy_json;
  /* The header's kid; NULL when it is not a string. */
  const char *key_id;
  /* The header's alg. */
  const char *algorithm;
  /* The signed payload, as the JSON text that was signed. */
  const char *claims_json;
} licv_license;

typedef struct licv_license_result {
  /* Nonzero exactly when error_count is 0. */
  int valid;
  size_t error_count;
  licv_error_code errors[LICV_MAX_ERRORS];
  /* The decoded license, even when it is not valid; NULL when the file is malformed. */
  const licv_license *license;
  struct licvi_arena *internal_;
} licv_license_result;

/*
 * Verifies a license file: its bytes, its text, or the API's base64 license_blob. The result is
 * in *out, also when the license is not valid. Free it with licv_license_result_free.
 */
licv_status licv_verify_license(const void *input, size_t length, const licv_keys *keys,
                                const licv_license_options *options, licv_license_result **out);

/* Frees a license result and everything it points to. NULL is ignored. */
void licv_license_result_free(licv_license_result *result);

/* ---------------------------------------------------------------------------------------------
 * Revocation lists
 * ------------------------------------------------------------------------------------------- */

typedef struct licv_revocation_entry {
  const char *serial;
  const char *status; /* revoked, suspended or expired */
  const char *at;     /* when the license took that status, ISO 8601 */
} licv_revocation_entry;

typedef struct licv_revocation_list {
  const char *product_id;
  int64_t version;
  const char *issued_at;
  const char *next_update;
  /* Sorted by serial. */
  const licv_revocation_entry *entries;
  size_t entry_count;
  struct licvi_arena *internal_;
} licv_revocation_list;

typedef struct licv_revocation_options {
  /* The product the list must be for; NULL: not checked. */
  const char *product_id;
  /* The list held so far; NULL when none. A delta needs one. */
  const licv_revocation_list *previous;
} licv_revocation_options;

void licv_revocation_options_init(licv_revocation_options *options);

typedef struct licv_revocation_result {
  int valid;
  size_t error_count;
  licv_error_code errors[LICV_MAX_ERRORS];
  /* The list to keep from now on; NULL unless valid. Owned by the result (see take_list). */
  licv_revocation_list *list;
  struct licvi_arena *internal_;
} licv_revocation_result;

/*
 * Verifies a revocation list or a delta (compact JWS text). A delta is applied to
 * options->previous. Free the result with licv_revocation_result_free.
 */
licv_status licv_verify_revocation_list(const char *jws, size_t length, const licv_keys *keys,
                                        const licv_revocation_options *options,
                                        licv_revocation_result **out);

/* Frees a revocation result, and its list unless it was taken. NULL is ignored. */
void licv_revocation_result_free(licv_revocation_result *result);

/*
 * Takes the list out of a result: the caller then owns it and frees it with
 * licv_revocation_list_free. The result's list is NULL afterwards.
 */
licv_revocation_list *licv_revocation_result_take_list(licv_revocation_result *result);

/* Frees a list. NULL is ignored. */
void licv_revocation_list_free(licv_revocation_list *list);

/* The entry of a serial, or NULL when the list does not name it. */
const licv_revocation_entry *licv_revocation_list_find(const licv_revocation_list *list,
                                                       const char *serial);

/*
 * The list as JSON text, to store it. *json is NUL-terminated; free it with licv_free.
 * length may be NULL.
 */
licv_status licv_revocation_list_to_json(const licv_revocation_list *list, char **json,
                                         size_t *length);

/*
 * A stored list read back from its JSON text. LICV_E_INVALID_ARGUMENT when the text is not such
 * a list. Free it with licv_revocation_list_free.
 */
licv_status licv_revocation_list_from_json(const char *json, size_t length,
                                           licv_revocation_list **out);

/* ---------------------------------------------------------------------------------------------
 * Signed answers (the Licensing-Signature header of an online answer)
 * ------------------------------------------------------------------------------------------- */

typedef struct licv_signed_answer {
  /* The answer's body, exactly as received. */
  const void *body;
  size_t body_length;
  /* The Licensing-Signature header; NULL when the answer had none. */
  const char *signature;
  /* The Licensing-Nonce the request sent. */
  const char *nonce;
} licv_signed_answer;

typedef struct licv_signed_answer_options {
  int use_now;
  double now;                     /* Unix seconds */
  double max_age_seconds;         /* default 300 */
  double clock_tolerance_seconds; /* default 60 */
} licv_signed_answer_options;

/* Sets the defaults: the current time, 300 seconds of age, 60 seconds of tolerance. */
void licv_signed_answer_options_init(licv_signed_answer_options *options);

typedef struct licv_signed_answer_result {
  int valid;
  size_t error_count;
  licv_error_code errors[LICV_MAX_ERRORS];
  /* When the service signed it (the header's iat), ISO 8601; NULL when unsigned or malformed. */
  const char *signed_at;
  char signed_at_buffer_[32];
} licv_signed_answer_result;

/*
 * Checks an answer against its signature. The result is in *out: a plain struct, owned by the
 * caller, with nothing to free.
 */
licv_status licv_verify_signed_answer(const licv_signed_answer *answer, const licv_keys *keys,
                                      const licv_signed_answer_options *options,
                                      licv_signed_answer_result *out);

/* ---------------------------------------------------------------------------------------------
 * Activation files (air-gapped machines)
 * ------------------------------------------------------------------------------------------- */

typedef struct licv_activation_options {
  int use_now;
  double now; /* Unix seconds */
  /* The request's nonce; NULL: not checked. */
  const char *nonce;
  /* The "x" of the machine's public key (base64url); NULL: not checked. */
  const char *machine_key_x;
  const char *fingerprint; /* NULL: not checked */
  const char *product_id;  /* NULL: not checked */
  double clock_tolerance_seconds; /* default 0 */
} licv_activation_options;

void licv_activation_options_init(licv_activation_options *options);

typedef struct licv_component {
  const char *name;
  const char *value;
} licv_component;

typedef struct licv_activation {
  const char *activation_id;   /* jti */
  const char *serial;          /* sub */
  const char *license_id;
  const char *organization_id; /* iss */
  const char *product_id;
  const char *product_code;
  const char *const *features;
  size_t feature_count;
  const char *fingerprint;
  const licv_component *components;
  size_t component_count;
  const char *issued_at;  /* iat, ISO 8601 */
  const char *expires_at; /* exp, ISO 8601 */
  int64_t issued_at_seconds;
  int64_t not_before_seconds;
  int64_t expires_at_seconds;
} licv_activation;

typedef struct licv_activation_result {
  int valid;
  size_t error_count;
  licv_error_code errors[LICV_MAX_ERRORS];
  /* The decoded activation, even when it is not valid; NULL when the file is malformed. */
  const licv_activation *activation;
  struct licvi_arena *internal_;
} licv_activation_result;

/* Verifies an activation file. Free the result with licv_activation_result_free. */
licv_status licv_verify_activation(const char *file, size_t length, const licv_keys *keys,
                                   const licv_activation_options *options,
                                   licv_activation_result **out);

void licv_activation_result_free(licv_activation_result *result);

#ifdef __cplusplus
}
#endif

#endif
