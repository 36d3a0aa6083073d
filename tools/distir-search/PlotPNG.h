//===- PlotPNG.h - Rasterize the search plot ----------------------*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TOOLS_DISTIR_SEARCH_PLOTPNG_H
#define DISTIR_TOOLS_DISTIR_SEARCH_PLOTPNG_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace distir {

/// Whether this build can write PNG plots.
bool canWritePlotPNG();

/// Renders the SVG document `svg` to a PNG file at `path` (librsvg and
/// cairo, at the SVG's own size, on a white background). Returns false and
/// sets `error` on failure, or when DistIR was built without librsvg.
bool writePlotPNG(llvm::StringRef svg, llvm::StringRef path,
                  std::string &error);

} // namespace distir

#endif // DISTIR_TOOLS_DISTIR_SEARCH_PLOTPNG_H
