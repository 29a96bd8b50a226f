// The tests' signing key and trust (tests/CMakeLists.txt, OPGEN_TEST_ENVIRONMENT) in the
// environment of every GoogleTest binary before main, unless the caller set them: caches the tests
// tune are signed with the key (OPGEN_SIGNING_KEY, inherited by the opgen commands the tests run)
// and lookups opened without explicit trust trust it (OPGEN_TRUST_FILE), as in a deployment.
#include <cstdlib>

namespace {

const bool kEnvironmentSet = [] {
    ::setenv("OPGEN_SIGNING_KEY", OPGEN_BINARY_DIR "/test-keys/opgen-test.key", 0);
    ::setenv("OPGEN_TRUST_FILE", OPGEN_BINARY_DIR "/test-keys/opgen-test.key.pub", 0);
    return true;
}();

}  // namespace
