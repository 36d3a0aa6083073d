//===- ImportRNN.cpp - ONNX RNN, GRU and LSTM, unrolled over the sequence ===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The sequence length is static, so a recurrent layer is its time steps:
// one matmul for every step's input projection at once ([seq * batch, in]
// x W^T), then per step a matmul of the previous hidden state with R^T,
// the gates (element-wise linalg.generic) and the new states, each step's
// output inserted into Y. Everything is a structured op: the analyses cost
// it, autodiff differentiates it, and data parallelism keeps the batch
// split through it (the batch is a parallel dim of every op). The ONNX
// equations (RNN; gate orders iofc and zrh, peepholes, linear_before_reset,
// input_forget, clip) are followed exactly; directions forward, reverse and
// bidirectional; sequence_lens (known or runtime) by masking the steps past
// each sequence's length.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include <functional>

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

namespace {
using Fn = std::function<Value(OpBuilder &, Location, Value)>;
} // namespace

/// The scalar function of an ONNX RNN activation name, or null.
static Fn activationFn(StringRef name, Type elt) {
  auto cst = [elt](OpBuilder &b, Location loc, double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, v));
  };
  if (name == "Sigmoid")
    return [cst](OpBuilder &b, Location loc, Value x) -> Value {
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
      return arith::DivFOp::create(
          b, loc, cst(b, loc, 1),
          arith::AddFOp::create(b, loc, cst(b, loc, 1), e));
    };
  if (name == "Tanh")
    return [](OpBuilder &b, Location loc, Value x) -> Value {
      return math::TanhOp::create(b, loc, x);
    };
  if (name == "Relu")
    return [cst](OpBuilder &b, Location loc, Value x) -> Value {
      return arith::MaximumFOp::create(b, loc, x, cst(b, loc, 0));
    };
  return nullptr;
}

LogicalResult Importer::importRecurrent(StringRef op) {
  bool isLSTM = op == "LSTM", isRNN = op == "RNN";
  if (!hasInput(0) || !hasInput(1) || !hasInput(2))
    return fail("expects X, W and R");
  RankedTensorType xt = inType(0);
  Type elt = xt.getElementType();
  if (!isa<FloatType>(elt))
    return fail("integer operands are not supported");
  if (xt.getRank() != 3)
    return fail("X must have rank 3, got " + Twine(xt.getRank()));
  int64_t layout = attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return fail("layout must be 0 or 1, got " + Twine(layout));
  std::string direction = attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return fail("unknown direction '" + direction + "'");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t gates = isLSTM ? 4 : isRNN ? 1 : 3;
  int64_t seq = xt.getDimSize(layout ? 1 : 0);
  int64_t batch = xt.getDimSize(layout ? 0 : 1), in = xt.getDimSize(2);
  int64_t hidden = inType(2).getRank() == 3 ? inType(2).getDimSize(2) : -1;
  if (auto h = attr("hidden_size"); h && h->i() != hidden)
    return fail("hidden_size " + Twine(h->i()) + " differs from R's");
  if (hidden <= 0 || seq <= 0 ||
      inShape(1) != ArrayRef<int64_t>{dirs, gates * hidden, in} ||
      inShape(2) != ArrayRef<int64_t>{dirs, gates * hidden, hidden})
    return fail("W " + shapeStr(inShape(1)) + " and R " + shapeStr(inShape(2)) +
                " do not fit X " + shapeStr(xt.getShape()) + " with " +
                Twine(dirs) + " direction(s) and " + Twine(gates) + " gates");
  for (unsigned i = 1; i < numInputs(); ++i)
    if (hasInput(i) && i != 4 && inElt(i) != elt)
      return fail("operands must have X's element type");
  if (hasInput(3) && inShape(3) != ArrayRef<int64_t>{dirs, 2 * gates * hidden})
    return fail("B must have shape [" + Twine(dirs) + "," +
                Twine(2 * gates * hidden) + "]");
  // Sequence lengths: steps at or past a sequence's length keep its state
  // and write zeros to Y (the ONNX semantics; the reverse direction then
  // starts at each sequence's last step). Steps before the shortest known
  // length need no mask; runtime lengths mask every step.
  int64_t unmaskedSteps = seq;
  Value lens;
  if (hasInput(4)) {
    if (!isa<IntegerType>(inElt(4)) || inShape(4) != ArrayRef<int64_t>{batch})
      return fail("sequence_lens must be an integer tensor of shape [" +
                  Twine(batch) + "], got " + shapeStr(inShape(4)));
    unmaskedSteps = 0;
    if (isKnown(4)) {
      SmallVector<int64_t> known = knownIntsOf(4);
      for (int64_t len : known)
        if (len < 0 || len > seq)
          return fail("sequence_lens value " + Twine(len) + " is outside [0, " +
                      Twine(seq) + "]");
      unmaskedSteps = *llvm::min_element(known);
    }
    if (unmaskedSteps < seq)
      lens = reshape(inValue(4), {batch, 1});
  }
  SmallVector<int64_t> stateShape =
      layout ? SmallVector<int64_t>{batch, dirs, hidden}
             : SmallVector<int64_t>{dirs, batch, hidden};
  for (unsigned i = 5; i <= (isLSTM ? 6u : 5u); ++i)
    if (hasInput(i) && inShape(i) != ArrayRef<int64_t>(stateShape))
      return fail(Twine(i == 5 ? "initial_h" : "initial_c") +
                  " must have shape " + shapeStr(stateShape));
  if (isLSTM && hasInput(7) &&
      inShape(7) != ArrayRef<int64_t>{dirs, 3 * hidden})
    return fail("P must have shape [" + Twine(dirs) + "," + Twine(3 * hidden) +
                "]");
  // Activations: f, g[, h] per direction.
  int64_t perDir = isLSTM ? 3 : isRNN ? 1 : 2;
  std::vector<std::string> names;
  if (const onnx::AttributeProto *a = attr("activations"))
    for (const std::string &s : a->strings())
      names.push_back(s);
  else
    for (int64_t d = 0; d < dirs; ++d) {
      if (!isRNN)
        names.push_back("Sigmoid");
      names.push_back("Tanh");
      if (isLSTM)
        names.push_back("Tanh");
    }
  if (static_cast<int64_t>(names.size()) != perDir * dirs)
    return fail("activations must name " + Twine(perDir * dirs) + " functions");
  SmallVector<Fn> fns;
  for (const std::string &n : names) {
    Fn fn = activationFn(n, elt);
    if (!fn)
      return fail("unsupported activation '" + n + "'");
    fns.push_back(fn);
  }
  if (attr("activation_alpha") || attr("activation_beta"))
    return fail("activation_alpha/activation_beta are not supported");
  std::optional<double> clip;
  if (attr("clip"))
    clip = attrFloat("clip", 0);
  if (clip && !(*clip > 0))
    return fail("clip must be positive");
  bool inputForget = isLSTM && attrInt("input_forget", 0) != 0;
  bool linearBeforeReset = !isLSTM && attrInt("linear_before_reset", 0) != 0;

  // X as [seq, batch, in].
  Value x = inValue(0);
  if (layout)
    x = transpose(x, {1, 0, 2});
  Value xFlat = reshape(x, {seq * batch, in});
  auto slice = [&](Value v, ArrayRef<int64_t> offsets,
                   ArrayRef<int64_t> sizes) {
    return extractSlice(v, offsets, sizes,
                        SmallVector<int64_t>(offsets.size(), 1));
  };
  auto ew =
      [&](ArrayRef<Value> ops,
          std::function<Value(OpBuilder &, Location, ArrayRef<Value>)> fn) {
        return *elementwise(ops, elt, fn);
      };
  auto clipped = [&](OpBuilder &b, Location loc, Value v) -> Value {
    if (!clip)
      return v;
    Value hi = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, *clip));
    Value lo = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, -*clip));
    return arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, lo), hi);
  };
  // State d of an initial-state input, as [batch, hidden].
  auto initialState = [&](unsigned input, int64_t d) -> Value {
    if (!hasInput(input))
      return filled({batch, hidden}, elt, 0);
    Value s = inValue(input);
    if (layout)
      return reshape(slice(s, {0, d, 0}, {batch, 1, hidden}), {batch, hidden});
    return reshape(slice(s, {d, 0, 0}, {1, batch, hidden}), {batch, hidden});
  };

  SmallVector<int64_t> yShape = {seq, dirs, batch, hidden};
  Value y = empty(yShape, elt);
  SmallVector<Value> lastH, lastC;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    Fn f = fns[perDir * d], g = isRNN ? nullptr : fns[perDir * d + 1];
    Fn h = isLSTM ? fns[perDir * d + 2] : nullptr;
    // Input projection of every step at once: [seq * batch, gates * H].
    Value w = reshape(slice(inValue(1), {d, 0, 0}, {1, gates * hidden, in}),
                      {gates * hidden, in});
    Value xw = matmul2d(xFlat, transpose(w, {1, 0}));
    Value r = reshape(slice(inValue(2), {d, 0, 0}, {1, gates * hidden, hidden}),
                      {gates * hidden, hidden});
    Value rT = transpose(r, {1, 0});
    // Wb and Rb, as [1, gates * H] each.
    Value wb, rb;
    if (hasInput(3)) {
      Value bd = reshape(slice(inValue(3), {d, 0}, {1, 2 * gates * hidden}),
                         {2 * gates * hidden});
      wb = reshape(slice(bd, {0}, {gates * hidden}), {1, gates * hidden});
      rb = reshape(slice(bd, {gates * hidden}, {gates * hidden}),
                   {1, gates * hidden});
    }
    // Both biases go into the input projection, except R's under GRU's
    // linear_before_reset (added to Ht-1 Rh^T inside the reset product).
    auto add = [](OpBuilder &b, Location loc, ArrayRef<Value> a) {
      Value v = a[0];
      for (Value o : a.drop_front())
        v = arith::AddFOp::create(b, loc, v, o);
      return v;
    };
    Value xwb = xw;
    if (hasInput(3))
      xwb = linearBeforeReset ? ew({xw, wb}, add) : ew({xw, wb, rb}, add);
    // GRU without linear_before_reset multiplies Ht-1 by R's z and r rows
    // only (the h rows see rt * Ht-1).
    Value rTGates =
        isLSTM || isRNN || linearBeforeReset
            ? rT
            : transpose(slice(r, {0, 0}, {2 * hidden, hidden}), {1, 0});
    Value peepI, peepO, peepF;
    if (isLSTM && hasInput(7)) {
      Value p =
          reshape(slice(inValue(7), {d, 0}, {1, 3 * hidden}), {3 * hidden});
      peepI = reshape(slice(p, {0}, {hidden}), {1, hidden});
      peepO = reshape(slice(p, {hidden}, {hidden}), {1, hidden});
      peepF = reshape(slice(p, {2 * hidden}, {hidden}), {1, hidden});
    }
    Value hPrev = initialState(5, d);
    Value cPrev = isLSTM ? initialState(6, d) : Value();
    auto gate = [&](Value all, int64_t k) {
      return slice(all, {0, k * hidden}, {batch, hidden});
    };
    for (int64_t step = 0; step < seq; ++step) {
      int64_t t = reverse ? seq - 1 - step : step;
      Value xs = slice(xwb, {t * batch, 0}, {batch, gates * hidden});
      Value cBefore = cPrev;
      Value hr = matmul2d(hPrev, rTGates);
      if (linearBeforeReset && hasInput(3))
        hr = ew({hr, rb}, add);
      Value hNew;
      if (isRNN) {
        // Ht = f(Xt Wi^T + Ht-1 Ri^T + Wbi + Rbi).
        hNew = ew({xs, hr}, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
          return f(b, loc,
                   clipped(b, loc, arith::AddFOp::create(b, loc, a[0], a[1])));
        });
      } else if (isLSTM) {
        Value pre =
            ew({xs, hr}, [](OpBuilder &b, Location loc, ArrayRef<Value> a) {
              return Value(arith::AddFOp::create(b, loc, a[0], a[1]));
            });
        // Gates i, o, f, c; peepholes on i and f read C(t-1), on o C(t).
        Value pi = gate(pre, 0), po = gate(pre, 1), pf = gate(pre, 2),
              pc = gate(pre, 3);
        auto withPeep = [&](Value pre, Value peep, Value c, Fn fn) {
          SmallVector<Value> ops = {pre};
          if (peep) {
            ops.push_back(peep);
            ops.push_back(c);
          }
          return ew(ops, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
            Value v = a[0];
            if (a.size() > 1)
              v = arith::AddFOp::create(
                  b, loc, v, arith::MulFOp::create(b, loc, a[1], a[2]));
            return fn(b, loc, clipped(b, loc, v));
          });
        };
        Value it = withPeep(pi, peepI, cPrev, f);
        Value ft =
            inputForget
                ? ew({it},
                     [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
                       Value one = arith::ConstantOp::create(
                           b, loc, b.getFloatAttr(elt, 1));
                       return Value(arith::SubFOp::create(b, loc, one, a[0]));
                     })
                : withPeep(pf, peepF, cPrev, f);
        Value ct = ew({pc}, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
          return g(b, loc, clipped(b, loc, a[0]));
        });
        Value cNew = ew({ft, cPrev, it, ct},
                        [](OpBuilder &b, Location loc, ArrayRef<Value> a) {
                          return Value(arith::AddFOp::create(
                              b, loc, arith::MulFOp::create(b, loc, a[0], a[1]),
                              arith::MulFOp::create(b, loc, a[2], a[3])));
                        });
        Value ot = withPeep(po, peepO, cNew, f);
        hNew = ew({ot, cNew}, [&](OpBuilder &b, Location loc,
                                  ArrayRef<Value> a) {
          return Value(arith::MulFOp::create(b, loc, a[0], h(b, loc, a[1])));
        });
        cPrev = cNew;
      } else {
        // Gates z, r, h.
        Value zt = ew({gate(xs, 0), gate(hr, 0)}, [&](OpBuilder &b,
                                                      Location loc,
                                                      ArrayRef<Value> a) {
          return f(b, loc,
                   clipped(b, loc, arith::AddFOp::create(b, loc, a[0], a[1])));
        });
        Value rtGate = ew({gate(xs, 1), gate(hr, 1)}, [&](OpBuilder &b,
                                                          Location loc,
                                                          ArrayRef<Value> a) {
          return f(b, loc,
                   clipped(b, loc, arith::AddFOp::create(b, loc, a[0], a[1])));
        });
        Value candidate;
        if (linearBeforeReset) {
          // g(Xt Wh^T + Wbh + rt * (Ht-1 Rh^T + Rbh)).
          candidate =
              ew({gate(xs, 2), rtGate, gate(hr, 2)},
                 [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
                   Value v = arith::AddFOp::create(
                       b, loc, a[0], arith::MulFOp::create(b, loc, a[1], a[2]));
                   return g(b, loc, clipped(b, loc, v));
                 });
        } else {
          Value rh = ew({rtGate, hPrev}, [](OpBuilder &b, Location loc,
                                            ArrayRef<Value> a) {
            return Value(arith::MulFOp::create(b, loc, a[0], a[1]));
          });
          Value rhR = matmul2d(
              rh,
              transpose(slice(r, {2 * hidden, 0}, {hidden, hidden}), {1, 0}));
          candidate = ew({gate(xs, 2), rhR}, [&](OpBuilder &b, Location loc,
                                                 ArrayRef<Value> a) {
            return g(
                b, loc,
                clipped(b, loc, arith::AddFOp::create(b, loc, a[0], a[1])));
          });
        }
        hNew = ew({zt, candidate, hPrev}, [&](OpBuilder &b, Location loc,
                                              ArrayRef<Value> a) {
          Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 1));
          Value keep = arith::SubFOp::create(b, loc, one, a[0]);
          return Value(arith::AddFOp::create(
              b, loc, arith::MulFOp::create(b, loc, keep, a[1]),
              arith::MulFOp::create(b, loc, a[0], a[2])));
        });
      }
      Value yStep = hNew;
      if (t >= unmaskedSteps) {
        // valid(b) = t < sequence_lens[b]: Y gets hNew or 0, the states
        // their new or previous values.
        // `prev` null: 0.
        auto masked = [&](Value next, Value prev) {
          SmallVector<Value> ops = {lens, next};
          if (prev)
            ops.push_back(prev);
          return ew(ops, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
            Value step = arith::ConstantOp::create(
                b, loc, b.getIntegerAttr(a[0].getType(), t));
            Value valid = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::slt, step, a[0]);
            Value other =
                prev ? a[2]
                     : arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 0))
                           .getResult();
            return Value(arith::SelectOp::create(b, loc, valid, a[1], other));
          });
        };
        yStep = masked(hNew, Value());
        hNew = masked(hNew, hPrev);
        if (isLSTM)
          cPrev = masked(cPrev, cBefore);
      }
      y = tensor::InsertSliceOp::create(
          builder, curLoc, reshape(yStep, {1, 1, batch, hidden}), y,
          ValueRange{}, ValueRange{}, ValueRange{},
          ArrayRef<int64_t>{t, d, 0, 0}, ArrayRef<int64_t>{1, 1, batch, hidden},
          ArrayRef<int64_t>{1, 1, 1, 1});
      hPrev = hNew;
    }
    lastH.push_back(hPrev);
    if (isLSTM)
      lastC.push_back(cPrev);
  }
  // Y: [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]); Y_h and
  // Y_c: [dirs, batch, H] (layout 1: [batch, dirs, H]).
  auto stack = [&](ArrayRef<Value> states) {
    Value s = empty({dirs, batch, hidden}, elt);
    for (auto [d, v] : llvm::enumerate(states))
      s = tensor::InsertSliceOp::create(
          builder, curLoc, reshape(v, {1, batch, hidden}), s, ValueRange{},
          ValueRange{}, ValueRange{},
          ArrayRef<int64_t>{static_cast<int64_t>(d), 0, 0},
          ArrayRef<int64_t>{1, batch, hidden}, ArrayRef<int64_t>{1, 1, 1});
    return layout ? transpose(s, {1, 0, 2}) : s;
  };
  setOutput(0, layout ? transpose(y, {2, 0, 1, 3}) : y);
  if (curNode->output_size() > 1 && !curNode->output(1).empty())
    setOutput(1, stack(lastH));
  if (isLSTM && curNode->output_size() > 2 && !curNode->output(2).empty())
    setOutput(2, stack(lastC));
  return success();
}
