#pragma once
/// \file explain.hpp
/// What `gpupeer explain` answers for a text or a log, shared by the CLI and the C API: the
/// known failures its lines match (KB) and what the tool outputs pasted in it say (nvidia-smi,
/// dcgmi, nccl-tests, the CUDA P2P samples, NCCL_DEBUG=INFO), read in one streamed pass.
/// An input of one line is also read as a query: a KB id ("driver/cuda-driver-too-old") finds
/// that entry; an error name or number of CUDA, NCCL or NVML ("cudaErrorPeerAccessUnsupported",
/// "CUDA error 217", "ncclSystemError", "NCCL error 2", "NVML_ERROR_NO_PERMISSION", a bare "217")
/// finds the entries whose error_code carries it (see api_error_code.hpp for what is read).

#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include "gpupeer/api_error_code.hpp"
#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/status.hpp"
#include "gpupeer/tool_output.hpp"

namespace gpupeer {

/// One explain's result. Plain data; any thread.
struct Explanation {
  KbScan scan;                           ///< the KB matches, best first
  std::vector<ToolOutputFinding> tools;  ///< what the pasted tool outputs say
  /// What a one-line input was read as: one error code, or for a bare number one per family that
  /// defines it; empty for logs and other text.
  std::vector<ApiErrorCode> codes;
  std::size_t kbEntries = 0;  ///< entries the knowledge base held
  /// Whether anything matched or was recognised (explain's exit 0).
  bool found() const { return !scan.matches.empty() || !tools.empty(); }
};

/// Explains the lines of `in` (streamed: any size) against `kb`.
Result<Explanation> explainStream(const KnowledgeBase& kb, std::istream& in);
/// Explains `text` (one message or many lines).
Result<Explanation> explainText(const KnowledgeBase& kb, const std::string& text);

/// The text `gpupeer explain` prints: tool outputs first, then at most `top` KB matches (0: all).
std::string renderExplanationText(const Explanation& e, std::size_t top);
/// `gpupeer explain --json` (ends with a newline): the KB scan's document with the tool outputs
/// under "toolOutputs".
std::string explanationToJson(const Explanation& e, std::size_t top);

}  // namespace gpupeer
