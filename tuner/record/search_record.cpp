#include "tuner/record/search_record.hpp"

namespace tbtune {

const char* search_mode_name(SearchMode m) {
  return m == SearchMode::Model ? "model" : "exhaustive";
}

}  // namespace tbtune
