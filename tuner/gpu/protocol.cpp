#include "tuner/gpu/protocol.hpp"

#include <cerrno>
#include <cstring>
#include <exception>

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

constexpr std::size_t kHeaderBytes = 5;

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    // MSG_NOSIGNAL: a dead peer is an EPIPE to handle, not a SIGPIPE that ends the tuner.
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) return false;
      throw Error(fmt::format("cannot write to the worker channel: {}", std::strerror(errno)));
    }
    data += n;
    size -= std::size_t(n);
  }
  return true;
}

// Milliseconds left until `deadline` for poll(): -1 without one, 0 once it has passed.
int poll_timeout(const Deadline& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      *deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : int(std::min<long long>(left.count() + 1, 1 << 30));
}

ReadStatus recv_all(int fd, char* data, std::size_t size, const Deadline& deadline) {
  while (size > 0) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_timeout(deadline));
    if (ready < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot wait for the worker channel: {}", std::strerror(errno)));
    }
    if (ready == 0) return ReadStatus::Timeout;
    const ssize_t n = ::read(fd, data, size);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return ReadStatus::Eof;
      throw Error(fmt::format("cannot read from the worker channel: {}", std::strerror(errno)));
    }
    if (n == 0) return ReadStatus::Eof;
    data += n;
    size -= std::size_t(n);
  }
  return ReadStatus::Ok;
}

}  // namespace

bool write_frame(int fd, const Frame& frame) {
  if (frame.payload.size() > kMaxFrameBytes)
    throw Error(fmt::format("worker message of {} bytes is over the {} byte limit",
                            frame.payload.size(), kMaxFrameBytes));
  const auto n = std::uint32_t(frame.payload.size());
  const char header[kHeaderBytes] = {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff),
                                     char((n >> 24) & 0xff), static_cast<char>(frame.kind)};
  return send_all(fd, header, kHeaderBytes) &&
         send_all(fd, frame.payload.data(), frame.payload.size());
}

ReadStatus read_frame(int fd, Frame& frame, Deadline deadline) {
  unsigned char header[kHeaderBytes];
  if (const ReadStatus s = recv_all(fd, reinterpret_cast<char*>(header), kHeaderBytes, deadline);
      s != ReadStatus::Ok)
    return s;
  const std::size_t n = std::size_t(header[0]) | std::size_t(header[1]) << 8 |
                        std::size_t(header[2]) << 16 | std::size_t(header[3]) << 24;
  const char kind = char(header[4]);
  if (n > kMaxFrameBytes || (kind != 'Q' && kind != 'R' && kind != 'X' && kind != 'E'))
    throw Error(fmt::format("malformed worker message (kind {:#x}, {} bytes)", int(header[4]), n));
  frame.kind = static_cast<FrameKind>(kind);
  frame.payload.assign(n, '\0');
  return recv_all(fd, frame.payload.data(), n, deadline);
}

void serve_jobs(int fd, const JobHandler& handler) {
  Frame request;
  while (read_frame(fd, request) == ReadStatus::Ok) {
    Frame reply;
    try {
      JobResult r = handler(request.payload);
      reply = {r.exit_after ? FrameKind::ReplyThenExit : FrameKind::Reply, std::move(r.reply)};
    } catch (const std::exception& e) {
      reply = {FrameKind::Failure, e.what()};
    } catch (...) {
      reply = {FrameKind::Failure, "the job handler threw a non-standard exception"};
    }
    if (!write_frame(fd, reply) || reply.kind == FrameKind::ReplyThenExit) return;
  }
}

}  // namespace tbtune
