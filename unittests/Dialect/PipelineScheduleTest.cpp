//===- PipelineScheduleTest.cpp - dist-dtp's task and device orders -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

using namespace distir::dist;

namespace {

TEST(PipelineSchedule, TaskNamesRoundTrip) {
  for (PipelineTask task : {PipelineTask{0, 0, PipelinePhase::Forward},
                            PipelineTask{3, 17, PipelinePhase::Backward},
                            PipelineTask{2, -1, PipelinePhase::Update}}) {
    std::optional<PipelineTask> parsed =
        parsePipelineTask(stringifyPipelineTask(task));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, task);
  }
  EXPECT_EQ(stringifyPipelineTask({1, 2, PipelinePhase::Backward}),
            "stage 1 backward 2");
  EXPECT_EQ(stringifyPipelineTask({0, -1, PipelinePhase::Update}),
            "stage 0 update");
}

TEST(PipelineSchedule, MalformedTaskNames) {
  for (const char *text :
       {"", "stage", "stage x forward 0", "stage 0 sideways 0",
        "stage 0 forward", "stage 0 update 3", "step 0 forward 0",
        "stage 0 forward 1 2"})
    EXPECT_FALSE(parsePipelineTask(text).has_value()) << text;
}

TEST(PipelineSchedule, OrderHasEveryTaskOnce) {
  for (PipelineSchedule schedule :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB,
        PipelineSchedule::EagerOneFOneB, PipelineSchedule::PipeDream})
    for (int64_t pp : {1, 2, 4})
      for (int64_t k : {1, 3, 8}) {
        std::vector<PipelineTask> order = getPipelineOrder(pp, k, schedule);
        EXPECT_EQ(order.size(), static_cast<size_t>(pp * (2 * k + 1)));
        std::set<PipelineTask> unique(order.begin(), order.end());
        EXPECT_EQ(unique.size(), order.size());
        // Forward m on stage s comes after forward m on stage s-1, and the
        // update of a stage after all its backwards.
        for (size_t i = 0; i < order.size(); ++i)
          for (size_t j = i + 1; j < order.size(); ++j) {
            const PipelineTask &later = order[i], &earlier = order[j];
            EXPECT_FALSE(later.phase == PipelinePhase::Forward &&
                         earlier.phase == PipelinePhase::Forward &&
                         later.microbatch == earlier.microbatch &&
                         earlier.stage + 1 == later.stage);
            EXPECT_FALSE(later.phase == PipelinePhase::Update &&
                         earlier.phase == PipelinePhase::Backward &&
                         later.stage == earlier.stage);
          }
      }
}

TEST(PipelineSchedule, StepsRespectDependencies) {
  // At most one task per stage in a step, and a task only after the tasks
  // it depends on finished in an earlier step: forward m on stage s after
  // forward m on s-1, backward m after forward m and after backward m on
  // s+1, the update after every backward of its stage.
  for (PipelineSchedule schedule :
       {PipelineSchedule::GPipe, PipelineSchedule::OneFOneB,
        PipelineSchedule::EagerOneFOneB, PipelineSchedule::PipeDream})
    for (int64_t pp : {1, 2, 3, 4})
      for (int64_t k : {1, 2, 5, 8}) {
        std::map<PipelineTask, size_t> stepOf;
        std::vector<std::vector<PipelineTask>> steps =
            getPipelineSteps(pp, k, schedule);
        for (auto [i, step] : llvm::enumerate(steps)) {
          std::set<int64_t> stages;
          for (const PipelineTask &t : step) {
            EXPECT_TRUE(stages.insert(t.stage).second);
            stepOf[t] = i;
          }
        }
        ASSERT_EQ(stepOf.size(), static_cast<size_t>(pp * (2 * k + 1)));
        for (int64_t s = 0; s < pp; ++s)
          for (int64_t m = 0; m < k; ++m) {
            size_t f = stepOf.at({s, m, PipelinePhase::Forward});
            size_t b = stepOf.at({s, m, PipelinePhase::Backward});
            EXPECT_LT(f, b);
            if (s > 0)
              EXPECT_LT(stepOf.at({s - 1, m, PipelinePhase::Forward}), f);
            if (s + 1 < pp)
              EXPECT_LT(stepOf.at({s + 1, m, PipelinePhase::Backward}), b);
            EXPECT_LT(b, stepOf.at({s, -1, PipelinePhase::Update}));
          }
      }
}

TEST(PipelineSchedule, PipeDreamOfThePublishedDistIR) {
  // Each step a stage alternates between its ready forwards and backwards
  // (a forward first): with two stages and four microbatches stage 0 runs
  // three forwards before the first backward is ready.
  auto perStage = [](int64_t stage) {
    std::string out;
    for (const PipelineTask &t :
         getPipelineOrder(2, 4, PipelineSchedule::PipeDream))
      if (t.stage == stage && t.phase != PipelinePhase::Update)
        out += (t.phase == PipelinePhase::Forward ? "F" : "B") +
               std::to_string(t.microbatch) + " ";
    return out;
  };
  EXPECT_EQ(perStage(0), "F0 F1 F2 B0 F3 B1 B2 B3 ");
  EXPECT_EQ(perStage(1), "F0 B0 F1 B1 F2 B2 F3 B3 ");
}

TEST(PipelineSchedule, TwoStageOrdersOfThePaper) {
  // docs/design/reference-facts.md: s0 = forward of stage 0, s1 = forward of
  // stage 1, s2 = backward of stage 1, s3 = backward of stage 0.
  auto names = [](PipelineSchedule schedule) {
    std::vector<std::string> out;
    for (const PipelineTask &t : getPipelineOrder(2, 2, schedule))
      if (t.phase != PipelinePhase::Update)
        out.push_back("s" +
                      std::to_string(t.phase == PipelinePhase::Forward
                                         ? t.stage
                                         : 3 - t.stage) +
                      "_" + std::to_string(t.microbatch));
    return out;
  };
  EXPECT_EQ(names(PipelineSchedule::GPipe),
            (std::vector<std::string>{"s0_0", "s0_1", "s1_0", "s1_1", "s2_0",
                                      "s3_0", "s2_1", "s3_1"}));
  EXPECT_EQ(names(PipelineSchedule::OneFOneB),
            (std::vector<std::string>{"s0_0", "s0_1", "s1_0", "s2_0", "s3_0",
                                      "s1_1", "s2_1", "s3_1"}));
}

TEST(PipelineSchedule, DeviceOrders) {
  std::string error;
  // tp-inner: t + T*d + T*D*s.
  std::optional<DeviceOrder> tpInner =
      parseDeviceOrder("tp-inner", 2, 4, 2, error);
  ASSERT_TRUE(tpInner.has_value());
  EXPECT_EQ(getDeviceId(*tpInner, 1, 3, 1), 3 + 4 * 1 + 8 * 1);
  std::optional<DeviceOrder> dpInner =
      parseDeviceOrder("dp-inner", 2, 4, 2, error);
  ASSERT_TRUE(dpInner.has_value());
  EXPECT_EQ(getDeviceId(*dpInner, 1, 3, 1), 1 + 2 * 3 + 8 * 1);
  // A mixed-radix order that splits tp around pp.
  std::optional<DeviceOrder> mixed =
      parseDeviceOrder("tp:2,pp:2,tp:2,dp:2", 2, 4, 2, error);
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(getDeviceId(*mixed, 0, 3, 1), 1 + 2 * 1 + 4 * 1);
  // Every (d, t, s) gets a distinct device.
  std::set<int64_t> ids;
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t s = 0; s < 2; ++s)
        ids.insert(getDeviceId(*mixed, d, t, s));
  EXPECT_EQ(ids.size(), 16u);
}

TEST(PipelineSchedule, BadDeviceOrders) {
  std::string error;
  EXPECT_FALSE(parseDeviceOrder("tp:4,pp:2", 2, 4, 2, error).has_value());
  EXPECT_NE(error.find("has dp, tp, pp = 1, 4, 2"), std::string::npos) << error;
  EXPECT_FALSE(parseDeviceOrder("xp:2", 1, 1, 1, error).has_value());
  EXPECT_NE(error.find("bad mapping"), std::string::npos) << error;
  EXPECT_FALSE(parseDeviceOrder("tp:0", 1, 1, 1, error).has_value());
}

} // namespace
