#include "tuner/gpu/nvrtc.hpp"

#include <cuda_runtime_api.h>  // CUDART_VERSION: the NVRTC major version we were built with
#include <dlfcn.h>
#include <nvrtc.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include <unistd.h>

#include "tuner/spec/error.hpp"
#include "tuner/spec/stencil.hpp"

namespace fs = std::filesystem;

namespace tbtune {
namespace {

// NVRTC is opened with dlopen on first use, not linked: an application whose lookups all hit
// never needs libnvrtc (a large library, slow to map) and runs where it is absent.
struct NvrtcApi {
  decltype(&::nvrtcVersion) version;
  decltype(&::nvrtcGetErrorString) error_string;
  decltype(&::nvrtcCreateProgram) create;
  decltype(&::nvrtcCompileProgram) compile;
  decltype(&::nvrtcGetProgramLogSize) log_size;
  decltype(&::nvrtcGetProgramLog) log;
  decltype(&::nvrtcGetCUBINSize) cubin_size;
  decltype(&::nvrtcGetCUBIN) cubin;
  decltype(&::nvrtcDestroyProgram) destroy;
};

std::atomic<bool> g_loaded{false};

// $TBTUNE_NVRTC names the library exactly (no fallback: how a test proves a hit never loads it);
// else the soname through the usual search path, then the toolkit's own folder.
void* open_nvrtc(std::string& tried) {
  const std::string soname = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  std::vector<std::string> names;
  if (const char* v = std::getenv("TBTUNE_NVRTC"); v && *v) {
    names.emplace_back(v);
  } else {
    names.push_back(soname);
    const char* cuda_home = std::getenv("CUDA_HOME");
    for (const char* root : {cuda_home, static_cast<const char*>(TBTUNE_CUDA_ROOT), "/usr/local/cuda"})
      if (root && *root) names.push_back((fs::path(root) / "lib64" / soname).string());
  }
  for (const std::string& name : names) {
    if (void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    tried += (tried.empty() ? "" : "; ") + std::string(::dlerror());
  }
  return nullptr;
}

NvrtcApi load_nvrtc() {
  std::string tried;
  void* h = open_nvrtc(tried);
  if (!h) throw CompileError("cannot load NVRTC (needed to compile a kernel): " + tried, "");
  auto sym = [h](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
    if (!fn) throw CompileError(std::string("NVRTC library lacks ") + name, "");
  };
  NvrtcApi a{};
  sym(a.version, "nvrtcVersion");
  sym(a.error_string, "nvrtcGetErrorString");
  sym(a.create, "nvrtcCreateProgram");
  sym(a.compile, "nvrtcCompileProgram");
  sym(a.log_size, "nvrtcGetProgramLogSize");
  sym(a.log, "nvrtcGetProgramLog");
  sym(a.cubin_size, "nvrtcGetCUBINSize");
  sym(a.cubin, "nvrtcGetCUBIN");
  sym(a.destroy, "nvrtcDestroyProgram");
  g_loaded = true;
  return a;
}

// A throwing initializer leaves the static uninitialised, so a failed load is retried next time.
const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load_nvrtc();
  return api;
}

void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw CompileError(std::string(what) + ": " + nvrtc().error_string(r), "");
}

// The toolkit's headers (cooperative_groups.h needs cccl too), found at run time so an installed
// binary works wherever the toolkit lives.
std::vector<std::string> include_options() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back(TBTUNE_CUDA_ROOT);
  roots.emplace_back("/usr/local/cuda");
  for (const std::string& root : roots) {
    const fs::path inc = fs::path(root) / "include";
    if (fs::exists(inc / "cooperative_groups.h"))
      return {"--include-path=" + inc.string(), "--include-path=" + (inc / "cccl").string()};
  }
  return {};
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// What the name of a temporary that process `pid` writes contains (remove_partial_writes).
std::string partial_marker(long pid) { return ".tmp" + std::to_string(pid) + "."; }

// Write-then-rename, so a reader never sees half a file, even with several tuners at once and
// several compiles in one tuner: the temporary name is unique per process and per call, and
// rename() replaces the target in one step (two writers of one key write the same bytes).
void write_atomic(const fs::path& p, const std::string& data) {
  static std::atomic<unsigned long> counter{0};
  const fs::path tmp = p.string() + partial_marker(::getpid()) + std::to_string(counter.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(data.data(), std::streamsize(data.size()));
    if (!f) {  // a cache that cannot be written only costs a recompile
      f.close();
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace

void remove_partial_writes(const std::string& cache_dir, long writer) {
  if (cache_dir.empty() || writer <= 0) return;
  const std::string marker = partial_marker(writer);
  std::error_code ec;
  std::vector<fs::path> partial;
  for (fs::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().find(marker) != std::string::npos) partial.push_back(it->path());
  for (const fs::path& p : partial) fs::remove(p, ec);
}

std::string arch_for(int cc_major, int cc_minor) {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

bool nvrtc_loaded() { return g_loaded; }

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtc().version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::map<std::string, KernelResources> parse_ptxas_log(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, KernelResources> out;
  // `current`: the entry being compiled; `described`: the function whose properties the next
  // frame line gives. ptxas reports the functions a kernel calls (a double sin's slow path, say)
  // after the kernel, whose figures they must not overwrite.
  std::string current, described;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      current = m[1];
      out[current];
    } else if (std::regex_search(line, m, properties)) {
      described = m[1];
    } else if (!current.empty() && described == current && std::regex_search(line, m, frame)) {
      auto& k = out[current];
      k.stack_bytes = std::stoi(m[1]);
      k.spill_stores = std::stoi(m[2]);
      k.spill_loads = std::stoi(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      auto& k = out[current];
      k.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) k.smem_bytes = std::stol(m[1]);
    }
  }
  return out;
}

CompiledModule compile_cuda(const std::string& source, const std::string& arch,
                            const std::string& cache_dir) {
  // --no-cache: where a CUDA driver is installed, NVRTC (12.9+) keeps CUBINs in the driver's
  // compute cache and, on a hit, skips ptxas, so the log has no "-v" report; registers and spills
  // would read as unknown and post-compile pruning would pass a spilling kernel. Our own cache
  // (cache_dir) keeps the log with each CUBIN instead. Seen on the H100: a tune that recompiled
  // candidates another cache folder already held stored 0 registers for them.
  // --split-compile=0: NVRTC optimises and assembles the module's kernels (a full pass, its
  // edge kernel, the step and rest kernels) on as many threads as the machine has. A large
  // wpipe3d module took 29.7 s on one thread and 16.0 s on this build machine's two, with the
  // same registers and spills (docs/tuning.md); the engine's other compiles share the cores.
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "--std=c++17",
                                      "--ptxas-options=-v", "--no-cache",
                                      "--split-compile=0", "-default-device"};
  for (const std::string& inc : include_options()) options.push_back(inc);

  std::string key_text = source + "\n" + nvrtc_version();
  for (const std::string& o : options) key_text += "\n" + o;
  const std::string key = hex64(fnv1a64(key_text));
  fs::path cubin_path, log_path;
  if (!cache_dir.empty()) {
    cubin_path = fs::path(cache_dir) / (key + ".cubin");
    log_path = fs::path(cache_dir) / (key + ".log");
    if (fs::exists(cubin_path) && fs::exists(log_path)) {
      CompiledModule m;
      m.cubin = read_file(cubin_path);
      m.log = read_file(log_path);
      m.kernels = parse_ptxas_log(m.log);
      m.from_cache = !m.cubin.empty();
      if (m.from_cache) return m;
    }
  }

  nvrtcProgram prog = nullptr;
  check(nvrtc().create(&prog, source.c_str(), "tbtune_kernel.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const nvrtcResult status = nvrtc().compile(prog, int(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtc().log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) nvrtc().log(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (status != NVRTC_SUCCESS) {
    nvrtc().destroy(&prog);
    throw CompileError(std::string("NVRTC failed to compile for ") + arch + ": " +
                           nvrtc().error_string(status), log);
  }
  std::size_t size = 0;
  check(nvrtc().cubin_size(prog, &size), "nvrtcGetCUBINSize");
  CompiledModule m;
  m.cubin.resize(size);
  check(nvrtc().cubin(prog, m.cubin.data()), "nvrtcGetCUBIN");
  nvrtc().destroy(&prog);
  m.log = log;
  m.kernels = parse_ptxas_log(log);

  if (!cache_dir.empty()) {
    std::error_code ec;
    fs::create_directories(cache_dir, ec);
    write_atomic(log_path, log);
    write_atomic(cubin_path, m.cubin);
  }
  return m;
}

}  // namespace tbtune
