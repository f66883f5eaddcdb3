/*
 * Signed answers: an online answer's Licensing-Signature, a JWS whose payload is the body,
 * detached. The error codes come in this order: unsigned (alone), malformed (alone), then
 * unknown_key or signature_invalid, nonce_mismatch, too_old, not_yet_signed.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

static const char ANSWER_TYP[] = "licensing-answer+jws";

void licv_signed_answer_options_init(licv_signed_answer_options *options) {
  if (options == NULL) return;
  memset(options, 0, sizeof *options);
  options->max_age_seconds = 300;
  options->clock_tolerance_seconds = 60;
}

licv_status licv_verify_signed_answer(const licv_signed_answer *answer, const licv_keys *keys,
                                      const licv_signed_answer_options *options,
                                      licv_signed_answer_result *out) {
  licv_signed_answer_options defaults;
  licvi_codes codes = {0, {(licv_error_code)0}};
  licvi_arena *arena;
  licvi_jws jws;
  const licvi_json *iat, *nonce;
  size_t length, start, end, i;
  double now_ms, max_age_ms, tolerance_ms;
  int decoded;

  if (out == NULL) return LICV_E_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  if (answer == NULL || keys == NULL || (answer->body == NULL && answer->body_length > 0))
    return LICV_E_INVALID_ARGUMENT;
  if (options == NULL) {
    licv_signed_answer_options_init(&defaults);
    options = &defaults;
  }
  if (!licvi_tolerance_ok(options->clock_tolerance_seconds) ||
      !licvi_tolerance_ok(options->max_age_seconds) ||
      (options->use_now && !isfinite(options->now)))
    return LICV_E_INVALID_ARGUMENT;

  if (answer->signature == NULL || answer->signature[0] == '\0') {
    out->errors[0] = LICV_UNSIGNED;
    out->error_count = 1;
    return LICV_OK;
  }
  arena = licvi_arena_new();
  if (arena == NULL) return LICV_E_NO_MEMORY;
  length = strlen(answer->signature);
  decoded = 0;
  if (licvi_utf8_valid((const uint8_t *)answer->signature, length)) {
    licvi_trim((const uint8_t *)answer->signature, length, &start, &end);
    decoded = licvi_jws_decode(arena, answer->signature + start, end - start,
                               (const uint8_t *)(answer->body == NULL ? "" : answer->body),
                               answer->body_length, 1, &jws);
  }
  if (decoded < 0) {
    licvi_arena_free(arena);
    return LICV_E_NO_MEMORY;
  }
  iat = decoded ? licvi_json_get(jws.header, "iat") : NULL;
  if (iat == NULL || iat->type != LICVI_JSON_NUMBER || !licvi_is_date_seconds(iat->number) ||
      !licvi_json_string_equals(licvi_json_get(jws.header, "typ"), ANSWER_TYP)) {
    licvi_arena_free(arena);
    out->errors[0] = LICV_MALFORMED;
    out->error_count = 1;
    return LICV_OK;
  }

  switch (licvi_jws_verify(&jws, keys)) {
    case LICVI_SIGNATURE_UNKNOWN_KEY: licvi_push(&codes, LICV_UNKNOWN_KEY); break;
    case LICVI_SIGNATURE_INVALID: licvi_push(&codes, LICV_SIGNATURE_INVALID); break;
    case LICVI_SIGNATURE_VALID: break;
  }
  nonce = licvi_json_get(jws.header, "nonce");
  if (answer->nonce == NULL ? nonce != NULL : !licvi_json_string_equals(nonce, answer->nonce))
    licvi_push(&codes, LICV_NONCE_MISMATCH);
  /* As a JavaScript Date holds it: whole milliseconds, within its range. */
  now_ms = options->use_now ? trunc(options->now * 1000) : licvi_now_ms();
  if (fabs(now_ms) > 8.64e15) now_ms = NAN;
  max_age_ms = options->max_age_seconds * 1000;
  tolerance_ms = options->clock_tolerance_seconds * 1000;
  if (iat->number * 1000 < now_ms - max_age_ms - tolerance_ms) licvi_push(&codes, LICV_TOO_OLD);
  if (iat->number * 1000 > now_ms + tolerance_ms) licvi_push(&codes, LICV_NOT_YET_SIGNED);
  licvi_format_date(iat->number * 1000, out->signed_at_buffer_);
  out->signed_at = out->signed_at_buffer_;
  licvi_arena_free(arena);

  for (i = 0; i < codes.count; i++) out->errors[i] = codes.codes[i];
  out->error_count = codes.count;
  out->valid = codes.count == 0;
  return LICV_OK;
}
