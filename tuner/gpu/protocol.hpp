#pragma once
/// @file protocol.hpp
/// The framing the tuner and its GPU worker process speak over a socketpair (a two-way pipe):
/// each message is a 4-byte little-endian payload length, a 1-byte kind, then the payload. The
/// payloads themselves (JSON) are the business of tuner/messages.hpp; this layer only moves
/// bytes, with deadlines, and knows nothing of CUDA, so it is tested without a GPU.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace tbtune {

enum class FrameKind : char {
  Request = 'Q',       ///< parent -> worker: a job
  Reply = 'R',         ///< worker -> parent: the job's result
  ReplyThenExit = 'X', ///< a result, after which the worker exits (its CUDA context is suspect)
  Failure = 'E',       ///< the job handler threw; the payload is its message
};

struct Frame {
  FrameKind kind = FrameKind::Request;
  std::string payload;
};

/// Largest payload accepted; anything larger means a confused peer.
inline constexpr std::size_t kMaxFrameBytes = std::size_t(1) << 26;

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

enum class ReadStatus { Ok, Eof, Timeout };

/// Sends one frame. Returns false when the peer is gone (closed its end, or died); throws
/// Error for any other failure.
[[nodiscard]] bool write_frame(int fd, const Frame& frame);

/// Reads one frame, waiting until `deadline` (none: forever). Eof when the peer closed its end
/// before a whole frame arrived; throws Error for a malformed frame.
[[nodiscard]] ReadStatus read_frame(int fd, Frame& frame, Deadline deadline = std::nullopt);

/// What a job handler returns: the reply, and whether the worker should exit after sending it.
struct JobResult {
  std::string reply;
  bool exit_after = false;
};
using JobHandler = std::function<JobResult(const std::string& request)>;

/// The worker's loop: reads requests from `fd` and answers each with `handler`'s result, or
/// with a Failure frame holding the message of whatever it threw. Returns when the parent
/// closes its end or after a reply with exit_after.
void serve_jobs(int fd, const JobHandler& handler);

}  // namespace tbtune
