#include "tuner/gpu/plant.hpp"

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// The kind planted for `index`, or "".
std::string planted_kind(int index) {
  const char* env = std::getenv("TBTUNE_PLANT_FAILURE");
  if (!env) return {};
  const std::string text = env;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const std::size_t colon = item.find(':');
    if (colon != std::string::npos && item.substr(0, colon) == std::to_string(index))
      return item.substr(colon + 1);
    pos = end + 1;
  }
  return {};
}

// A volatile loop on memory nobody writes cannot be optimised away, so the kernel never ends.
constexpr const char* kPlantSource = R"(
extern "C" __global__ void tb_plant_illegal(int* p) { p[threadIdx.x] = 1; }
extern "C" __global__ void tb_plant_hang(int* p) {
  volatile int* flag = p;
  while (flag[0] == 0) {}
}
)";

void launch_planted(const char* kernel_name, void* pointer, const std::string& arch) {
  const CompiledModule m = compile_cuda(kPlantSource, arch);
  LoadedModule module(m.cubin);
  const void* kernel = module.kernel(kernel_name);
  Launch l;
  void* args[] = {&pointer};
  launch_kernel_args(kernel, l, args);
  synchronize();
}

}  // namespace

void plant_failure_if_asked(int index, const std::string& arch) {
  const std::string kind = planted_kind(index);
  if (kind.empty()) return;
  if (kind == "abort") std::abort();
  if (kind == "segv") {
    std::raise(SIGSEGV);
  } else if (kind == "illegal") {
    launch_planted("tb_plant_illegal", reinterpret_cast<void*>(std::uintptr_t(0x10)), arch);
  } else if (kind == "hang") {
    DeviceBuffer flag(sizeof(int));
    const int zero = 0;
    flag.upload(&zero, sizeof zero);
    launch_planted("tb_plant_hang", flag.get(), arch);
  }
  // Still here: an unknown kind, or a kernel that did not fail as planted.
  throw Error("TBTUNE_PLANT_FAILURE: planted '" + kind + "' failure did not happen");
}

}  // namespace tbtune
