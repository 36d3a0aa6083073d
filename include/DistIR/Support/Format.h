//===- Format.h - Human-readable quantities in DistIR's reports -*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SUPPORT_FORMAT_H
#define DISTIR_SUPPORT_FORMAT_H

#include <string>

namespace distir {

/// A duration for people: "1.250 s", "12.500 ms" or "830.000 us".
std::string formatSeconds(double seconds);

} // namespace distir

#endif // DISTIR_SUPPORT_FORMAT_H
