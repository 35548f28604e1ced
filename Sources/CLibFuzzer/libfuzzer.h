// libFuzzer's driver, for executables that have their own `main` (SwiftPM names every
// executable's entry point, so libFuzzer's `main` cannot be used). Linked by -sanitize=fuzzer.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
