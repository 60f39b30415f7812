// The catalogue of bad input (docs/bad-inputs.md), `report --results` files: read with bounded
// time and memory, and refused with a Status that names the file and the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "core/bounded_input.hpp"
#include "fixture_support.hpp"
#include "gpupeer/report.hpp"
#include "kb_test_support.hpp"

namespace gpupeer {
namespace {

TEST(BadResultsFile, FifoIsRefusedWithoutWaitingForAWriter) {
  testing::TempDir dir;
  std::string fifo = dir.path() + "/results.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ReportResults r;
  Status loaded = loadReportResults(fifo, r);  // nobody writes it: a blocking open never returns
  EXPECT_EQ(loaded.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find("'" + fifo + "' is a FIFO"), std::string::npos) << loaded.toString();
}

TEST(BadResultsFile, ThatNeverEndsIsRefusedAtTheSizeLimit) {
  ReportResults r;
  Status loaded = loadReportResults("/dev/zero", r);
  EXPECT_EQ(loaded.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(loaded.message().find("'/dev/zero' is larger than 64 MiB"), std::string::npos) << loaded.toString();
}

// The Status of loading `text` as a results file.
Status load(const std::string& text, ReportResults* into = nullptr) {
  testing::TempDir dir;
  ReportResults scratch;
  return loadReportResults(dir.write("results.jsonl", text), into ? *into : scratch);
}

void expectRefused(const std::string& text, const std::string& messagePart) {
  Status loaded = load(text);
  EXPECT_EQ(loaded.code(), ErrorCode::kParse) << loaded.toString();
  EXPECT_NE(loaded.message().find(messagePart), std::string::npos) << loaded.toString();
}

std::string deep(int levels) { return std::string(levels, '[') + std::string(levels, ']'); }

TEST(BadResults, DeepNestingInARowOrCellIsRefused) {
  expectRefused(R"({"testcase": "ce_write", "cells": )" + deep(100000) + "}\n",
                "results.jsonl:1: JSON nested more than 64");
  expectRefused("$ gpupeer coll\n{\"op\": \"all_reduce\", \"rows\": [" + deep(100) + "]}\n",
                "results.jsonl:2: JSON nested more than 64");
  // Deep over many lines: no line is a result; refused as such, not by a crash.
  expectRefused(
      "{\"op\": \"all_reduce\", \"rows\":\n" + std::string(100000, '[') + "\n" + std::string(100000, ']') + "\n}\n",
      "no result found");
}

TEST(BadResults, ObjectWithTooManyKeysIsRefusedByCount) {
  std::string keys = "{";
  for (int i = 0; i < 150000; ++i) keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  keys += "}";
  expectRefused("$ gpupeer bench\n{\"testcase\": \"ce_write\", \"extra\": " + keys + ", \"cells\": []}\n",
                "results.jsonl:2: a JSON object with more than 10000 keys; refused");
}

TEST(BadResults, KeysAreCountedPastAVeryDeepArrayWithoutKeepingEachBracket) {
  // 100,000 brackets are counted, not kept one by one; the object after them still has its keys
  // counted where it starts.
  std::string keys = "{";
  for (int i = 0; i < 10001; ++i) keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  keys += "}";
  const std::string text = "[" + std::string(100000, '[') + std::string(100000, ']') + "," + keys + "]";
  const std::size_t past = jsonKeyPastLimit(text, kMaxJsonObjectKeys);
  ASSERT_NE(past, std::string_view::npos);
  EXPECT_EQ(text.rfind(':'), past) << "the 10,001st key, the last of the object";
  // Keys nested past the kept depth are not counted: such a document is refused by its depth.
  EXPECT_EQ(jsonKeyPastLimit(std::string(1000, '[') + keys + std::string(1000, ']'), kMaxJsonObjectKeys),
            std::string_view::npos);
}

TEST(BadResults, WronglyTypedFieldIsNamed) {
  expectRefused(R"({"testcase": "ce_write", "cells": [{"src": 0, "dst": 1, "verified": "yes"}]})",
                "results.jsonl: field 'cells[0].verified': expected true or false");
  expectRefused(R"({"testcase": "ce_write", "cells": {"src": 0}})", "field 'cells': expected an array");
  expectRefused(R"({"testcase": "ce_write", "cells": [7]})", "field 'cells[0]': expected an object");
  expectRefused(R"({"op": "all_reduce", "rows": 5})", "field 'rows': expected an array");
  expectRefused(R"({"op": "all_reduce", "rows": [{"bytes": "8", "us": 1}]})",
                "field 'rows[0].bytes': expected a number");
  expectRefused(R"({"op": "all_reduce", "rows": [{"bytes": 8, "us": 1, "baselines": {"nccl": []}}]})",
                "field 'rows[0].baselines.nccl': expected an object");
  expectRefused("$ log\n{\"metric\": \"m\", \"value\": \"fast\"}\n",
                "results.jsonl:2: field 'value': expected a number");
}

TEST(BadResults, OrdinalsAndSizesOutOfRangeAreNamed) {
  expectRefused(R"({"testcase": "ce_write", "cells": [{"src": 30000, "dst": 1}]})",
                "field 'cells[0].src': 30000 makes no sense here (expected -1 to 127)");
  expectRefused(R"({"op": "all_reduce", "rows": [{"bytes": 1.7e308, "us": 1}]})", "field 'rows[0].bytes': 1.7e+308");
  expectRefused(R"({"metric": "m", "value": 1, "bytes": 0.5})", "field 'bytes': 0.5 is not a whole number of bytes");
}

TEST(BadResults, TooManyCellsOrRowsAreRefused) {
  std::string cells;
  for (int i = 0; i <= 128 * 128; ++i) cells += std::string(i ? "," : "") + R"({"src": 0, "dst": 1})";
  expectRefused(R"({"testcase": "ce_write", "cells": [)" + cells + "]}", "field 'cells': 16385 entries; at most 16384");
  std::string rows;
  for (int i = 0; i <= 256; ++i) rows += std::string(i ? "," : "") + R"({"bytes": 8, "us": 1})";
  expectRefused(R"({"op": "all_reduce", "rows": [)" + rows + "]}", "field 'rows': 257 entries; at most 256");
}

// Values at both ends of the double range: charts and tables of bounded size, drawn at once.
TEST(BadResults, ExtremeValuesDrawBoundedCharts) {
  ReportResults r;
  ASSERT_TRUE(
      load(R"({"op": "all_reduce", "mode": "graph", "rows": [)"
           R"({"bytes": 8, "us": 1.7e308, "busbw": 5e-324, "baselines": {"nccl": {"us": 5e-324, "busbw": 1.7e308}}},)"
           R"({"bytes": 9007199254740992, "us": 5e-324, "busbw": 1.7e308}]})",
           &r)
          .isOk());
  ASSERT_TRUE(load(R"({"testcase": "ce_write_sweep", "unit": "GB/s", "cells": [)"
                   R"({"src": 0, "dst": 1, "bytes": 1, "median": 1.7e308, "samples": 1},)"
                   R"({"src": 0, "dst": 1, "bytes": 2, "median": 5e-324, "samples": 1}]})"
                   "\n",
                   &r)
                  .isOk());
  Snapshot s = testing::loadFixture("snapshot_h200_2gpu_captured.json");
  ReportInput in;
  in.snapshot = &s;
  in.results = &r;
  std::string html = renderHtmlReport(in);
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_LT(html.size(), 2u << 20) << "the charts grew with the values";
}

}  // namespace
}  // namespace gpupeer
