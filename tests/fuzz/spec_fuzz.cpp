// libFuzzer target: YAML text -> spec -> stencil IR (expression language, canonical form, hash)
// -> problem. Any input may be refused with a tbtune::Error; nothing may crash, hang, leak,
// overflow the stack or take more than the fuzzer's memory limit. Build and run: scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tuner/spec/error.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const tbtune::Problem p = tbtune::make_problem(tbtune::parse_spec(text, "fuzz.yaml"));
    // What every later stage relies on (docs/hardening.md): a bounded radius, a domain with an
    // interior, a hash of 16 hex digits.
    if (p.stencil.radius > tbtune::kMaxRadius || p.interior_cells() < 1 ||
        p.stencil.hash.size() != 16)
      __builtin_trap();
  } catch (const tbtune::Error&) {
    // Refused with a message: the expected outcome for most inputs.
  }
  return 0;
}
