#pragma once
/// @file templates.hpp
/// Access to the CUDA kernel templates in templates/, embedded into the binary at build time.
#include <string>

namespace tbtune {

/// The text of templates/<name> (for example "naive.cuh"), or nullptr if there is none.
[[nodiscard]] const std::string* embedded_template(const std::string& name);

}  // namespace tbtune
