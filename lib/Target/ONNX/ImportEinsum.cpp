//===- ImportEinsum.cpp - ONNX Einsum as one linalg.generic ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Einsum (numpy semantics): one loop per label, parallel for the output's
// labels and reductions for the others; each operand reads its labels
// through its indexing map, the body multiplies the operands and adds into
// the result. Contractions written with einsum (attention's "bhqd,bhkd->
// bhqk") are then ordinary structured ops: costed, differentiated and
// partitioned like MatMul. A label repeated within an operand reads its
// diagonal; "..." stands for the same trailing dims in every operand (size-1
// dims broadcast).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

namespace {
/// A parsed term: labels (letters as their character, the dims of "..."
/// as 256 + k counted from the last), in operand order.
using Term = SmallVector<int>;
constexpr int kEllipsisBase = 256;
} // namespace

/// Parses one term of `equation` (letters and at most one "...") for an
/// operand of `rank` dims (-1: the output, whose ellipsis takes
/// `ellipsisRank` dims). Returns an error message, or "" on success.
static std::string parseTerm(StringRef text, int64_t rank, int64_t ellipsisRank,
                             Term &term) {
  int64_t letters = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("...")) {
      if (ellipsis)
        return "term '" + text.str() + "' has two ellipses";
      ellipsis = true;
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(text[i]))
      return "term '" + text.str() + "' has the character '" +
             std::string(1, text[i]) + "' (expected letters and '...')";
    ++letters;
  }
  int64_t covered = rank >= 0 ? rank - letters : ellipsisRank;
  if (rank >= 0 && (covered < 0 || (!ellipsis && covered != 0)))
    return "term '" + text.str() + "' has " + std::to_string(letters) +
           " labels for an operand of rank " + std::to_string(rank);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("...")) {
      for (int64_t k = covered; k > 0; --k)
        term.push_back(kEllipsisBase + static_cast<int>(k) - 1);
      i += 2;
      continue;
    }
    term.push_back(static_cast<unsigned char>(text[i]));
  }
  return "";
}

LogicalResult Importer::importEinsum() {
  std::string equation;
  for (char c : attrString("equation", ""))
    if (c != ' ')
      equation += c;
  if (equation.empty())
    return fail("expects an equation");
  unsigned numOperands = numInputs();
  if (numOperands == 0)
    return fail("expects at least one input");
  for (unsigned i = 0; i < numOperands; ++i)
    if (!hasInput(i))
      return fail("input " + Twine(i) + " is missing");
  Type elt = inElt(0);
  if (elt.isInteger(1))
    return fail("bool operands are not supported");
  for (unsigned i = 1; i < numOperands; ++i)
    if (inElt(i) != elt)
      return fail("operand element types differ");

  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != numOperands)
    return fail("the equation has " + Twine(terms.size()) +
                (terms.size() == 1 ? " term" : " terms") + " for " +
                Twine(numOperands) + " inputs");
  SmallVector<Term> operandTerms(numOperands);
  int64_t ellipsisRank = 0;
  for (unsigned i = 0; i < numOperands; ++i) {
    if (std::string err =
            parseTerm(terms[i], inType(i).getRank(), 0, operandTerms[i]);
        !err.empty())
      return fail(err);
    for (int label : operandTerms[i])
      if (label >= kEllipsisBase)
        ellipsisRank =
            std::max<int64_t>(ellipsisRank, label - kEllipsisBase + 1);
  }

  // Size of each label; size-1 dims broadcast.
  std::map<int, int64_t> sizes;
  for (unsigned i = 0; i < numOperands; ++i)
    for (auto [d, label] : llvm::enumerate(operandTerms[i])) {
      int64_t size = inType(i).getDimSize(d);
      auto [it, inserted] = sizes.try_emplace(label, size);
      if (inserted || it->second == size || size == 1)
        continue;
      if (it->second == 1) {
        it->second = size;
        continue;
      }
      std::string name = label >= kEllipsisBase
                             ? "an ellipsis dim"
                             : "label '" + std::string(1, char(label)) + "'";
      return fail(name + " has sizes " + Twine(it->second) + " and " +
                  Twine(size));
    }

  Term out;
  if (explicitOutput) {
    if (std::string err = parseTerm(rhs, -1, ellipsisRank, out); !err.empty())
      return fail(err);
    std::set<int> seen;
    for (int label : out) {
      if (!seen.insert(label).second)
        return fail("output label '" + std::string(1, char(label)) +
                    "' appears twice");
      if (!sizes.count(label))
        return fail("output label '" + std::string(1, char(label)) +
                    "' is not in any input");
    }
  } else {
    // numpy's implicit output: the ellipsis dims, then the letters that
    // appear once, in alphabetical (ASCII) order.
    for (int64_t k = ellipsisRank; k > 0; --k)
      out.push_back(kEllipsisBase + static_cast<int>(k) - 1);
    std::map<int, int> counts;
    for (const Term &term : operandTerms)
      for (int label : term)
        if (label < kEllipsisBase)
          ++counts[label];
    for (auto [label, count] : counts)
      if (count == 1)
        out.push_back(label);
  }

  // Loops: the output's labels, then the summed ones by first appearance.
  SmallVector<int> loops(out.begin(), out.end());
  for (const Term &term : operandTerms)
    for (int label : term)
      if (!llvm::is_contained(loops, label))
        loops.push_back(label);
  auto loopOf = [&](int label) {
    return static_cast<unsigned>(llvm::find(loops, label) - loops.begin());
  };
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < numOperands; ++i) {
    SmallVector<AffineExpr> exprs;
    for (auto [d, label] : llvm::enumerate(operandTerms[i]))
      exprs.push_back(inType(i).getDimSize(d) == 1 && sizes[label] != 1
                          ? builder.getAffineConstantExpr(0)
                          : builder.getAffineDimExpr(loopOf(label)));
    maps.push_back(AffineMap::get(loops.size(), 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outExprs;
  SmallVector<int64_t> outShape;
  for (int label : out) {
    outExprs.push_back(builder.getAffineDimExpr(loopOf(label)));
    outShape.push_back(sizes[label]);
  }
  maps.push_back(AffineMap::get(loops.size(), 0, outExprs, ctx));
  SmallVector<utils::IteratorType> iters(loops.size(),
                                         utils::IteratorType::reduction);
  for (size_t l = 0; l < out.size(); ++l)
    iters[l] = utils::IteratorType::parallel;
  bool reduces = loops.size() > out.size();
  if (numElements(outShape) > kMaxRangeElements)
    return fail("the result has more than " + Twine(kMaxRangeElements) +
                " elements");

  bool isFloat = isa<FloatType>(elt);
  SmallVector<Value> operands;
  for (unsigned i = 0; i < numOperands; ++i)
    operands.push_back(inValue(i));
  Value init = reduces ? filled(outShape, elt, 0) : empty(outShape, elt);
  Value r =
      linalg::GenericOp::create(
          builder, curLoc, TypeRange{init.getType()}, operands,
          ValueRange{init}, maps, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value p = args[0];
            for (unsigned i = 1; i < numOperands; ++i)
              p = isFloat ? Value(arith::MulFOp::create(b, loc, p, args[i]))
                          : Value(arith::MulIOp::create(b, loc, p, args[i]));
            if (reduces)
              p = isFloat
                      ? Value(arith::AddFOp::create(b, loc, args.back(), p))
                      : Value(arith::AddIOp::create(b, loc, args.back(), p));
            linalg::YieldOp::create(b, loc, p);
          })
          .getResult(0);
  setOutput(0, r);
  return success();
}
