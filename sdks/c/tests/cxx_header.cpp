// The public header compiles as C++ and its functions link from C++ (extern "C").
#include "licensing_verifier.h"

#include <cstdio>
#include <cstring>
#include <string>

int main() {
  // A key from the conformance vectors (product-ed25519.pem): a PEM reads as a key set of one.
  const std::string pem =
      "-----BEGIN PUBLIC KEY-----\n"
      "MCowBQYDK2VwAyEAH0HHGzj5Jkv+33i3a7fyUgMddKX5q81kJYQuqou6GPA=\n"
      "-----END PUBLIC KEY-----\n";
  licv_keys *keys = nullptr;
  if (licv_keys_from_pem(pem.data(), pem.size(), &keys) != LICV_OK) {
    std::puts("the PEM was refused");
    return 1;
  }
  licv_license_options options;
  licv_license_options_init(&options);
  licv_license_result *result = nullptr;
  const std::string text = "not a license";
  licv_status status = licv_verify_license(text.data(), text.size(), keys, &options, &result);
  int ok = status == LICV_OK && result != nullptr && !result->valid && result->error_count == 1 &&
           std::strcmp(licv_error_code_name(result->errors[0]), "malformed") == 0 &&
           std::strcmp(licv_keys_alg(keys, 0), "EdDSA") == 0;
  licv_license_result_free(result);
  licv_keys_free(keys);
  std::puts(ok ? "the header works from C++" : "unexpected result");
  return ok ? 0 : 1;
}
