#pragma once
/// @file roofline_svg.hpp
/// A roofline chart of a device with measured (or predicted) kernels on it, as SVG 1.1 text.
///
/// Axes: x = operational intensity in flop per byte of *global* traffic, y = GFLOP/s, both
/// log10. We chose flop/s over GCells/s for y so that the global-memory slope is the device's
/// (y = B_gm x I) and stencils with different flops per cell share one chart; roofline_point()
/// converts a GCells/s figure. With the model's terms (eqs. 5.2-5.4) a kernel fusing t steps has
/// I = t a_cmp / (a_gm d_gm S_cell), so deeper temporal blocking moves a point to the right, and
/// its shared-memory ceiling is B_sm x a_cmp / (a_sm d_sm S_cell), horizontal: the bottleneck
/// shift of eq. 5.13 is where the global-memory slope meets that ceiling.
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "tuner/spec/spec.hpp"

namespace tbtune {

/// One kernel on the chart.
struct RooflinePoint {
  std::string label;          ///< drawn next to the dot; XML-escaped by roofline_svg
  double intensity = 0;       ///< flop per byte of global-memory traffic
  double gflops = 0;          ///< measured GFLOP/s (GCells/s x flops per cell)
  double sm_intensity = 0;    ///< flop per byte of shared-memory traffic; 0 = unknown
};

/// The point of a kernel described by `terms` that ran at `gcells` GCells/s.
[[nodiscard]] RooflinePoint roofline_point(std::string label, double gcells,
                                           const ModelTerms& terms, DType dtype);

/// A self-contained SVG 1.1 document starting with `<svg` (no XML declaration, no scripts, fonts or external references): log-log axes
/// with decade ticks and labels, the global-memory slope and the FP ceiling of `dtype` as
/// labelled lines, the shared-memory ceiling as a labelled horizontal line for each distinct
/// sm_intensity among the points (or, when no point gives one, as the slope B_sm x I of a
/// hierarchical roofline), and each point as one labelled <circle>. Points with a non-positive
/// coordinate are drawn on the axis they fall off.
[[nodiscard]] std::string roofline_svg(const DeviceProfile& device, DType dtype,
                                       const std::vector<RooflinePoint>& points);

/// `text` with & < > " ' replaced by XML entities.
[[nodiscard]] std::string xml_escape(std::string_view text);

}  // namespace tbtune
