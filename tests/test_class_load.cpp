// Class mode's server under a real classroom's connections (issue 40, design.md's "Class mode
// serves, never listens by default"): with 200 idle keep-alive connections and 40 slowloris
// connections (a byte a second of a request never finished) open on 127.0.0.1, 60 students poll
// and answer at once; every request is answered within 1 s and all 60 answers are counted. The
// latencies are printed (median, p95, max).
// clang-format off
#include "gui/model/class_server.h"
#include "reference.h"
// clang-format on

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace attn {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kIdle = 200;
constexpr int kSlow = 40;
constexpr int kStudents = 60;
constexpr int kPolls = 4;  // polls per student, around its answer

// A step whose question takes a number (any number is a valid answer).
ClassStep number_step() {
  const std::string text = R"({
    "format": "attention-lab-lesson", "version": 1, "title": "Load test",
    "steps": [{"title": "Scores", "example": "fear-is", "stage": "scores",
               "question": {"kind": "number", "prompt": "Score of Fear and is?",
                            "answer": {"stage": "scores", "row": 0, "col": 1}}}]})";
  std::string error;
  const std::optional<Lesson> l = parse_lesson(text, "load-test.json", error);
  EXPECT_TRUE(l) << error;
  ClassStep s;
  s.index = 0;
  s.title = l->steps.at(0).title;
  s.question = l->steps.at(0).question;
  s.trace = lesson_step_trace(l->steps.at(0));
  s.svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
  return s;
}

// A connected socket to 127.0.0.1:port whose reads give up after 5 s (so a stalled server fails
// the test rather than hanging it), or -1.
int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends one request on a kept-alive connection and reads its whole answer (headers, then a body
// of Content-Length bytes). The status, or -1 when the connection failed or timed out.
int round_trip(int fd, const std::string& request, std::string* body = nullptr) {
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    return -1;
  std::string got;
  char buf[4096];
  size_t head_end = std::string::npos;
  size_t length = 0;
  for (;;) {
    if (head_end == std::string::npos) {
      head_end = got.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const size_t at = got.find("Content-Length: ");
        if (at == std::string::npos || at > head_end) return -1;
        length = std::strtoul(got.c_str() + at + 16, nullptr, 10);
      }
    }
    if (head_end != std::string::npos && got.size() >= head_end + 4 + length) break;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    got.append(buf, static_cast<size_t>(n));
  }
  if (got.rfind("HTTP/1.1 ", 0) != 0) return -1;
  if (body) *body = got.substr(head_end + 4, length);
  return std::atoi(got.c_str() + 9);
}

std::string get_state(const std::string& client) {
  return "GET /api/state?code=1234&client=" + client + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
}

std::string post_answer(const std::string& client, int value) {
  const std::string body = R"({"code": "1234", "client": ")" + client + R"(", "answer": ")" +
                           std::to_string(value) + R"("})";
  return "POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Each connection is a file descriptor here and one in the server (same process).
void raise_file_limit() {
  rlimit r{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &r), 0);
  const rlim_t want = 4096;
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < want) {
    r.rlim_cur = (r.rlim_max == RLIM_INFINITY || r.rlim_max >= want) ? want : r.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &r), 0);
  }
  ASSERT_GE(r.rlim_cur, static_cast<rlim_t>(2 * (kIdle + kSlow + kStudents) + 64))
      << "the file descriptor limit is too low for this test";
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

TEST(ClassLoad, IdleAndSlowConnectionsDoNotHoldTheStudents) {
  raise_file_limit();
  ClassRoom room("1234");
  room.publish(number_step());
  ClassServer server(room);
  ASSERT_EQ(server.start("127.0.0.1", 0), "");
  const int port = server.port();

  // 200 phones that polled once and keep their connection open, idle.
  std::vector<int> idle;
  for (int i = 0; i < kIdle; ++i) {
    const int fd = connect_to(port);
    ASSERT_GE(fd, 0) << "idle connection " << i;
    ASSERT_EQ(round_trip(fd, get_state("idle" + std::to_string(i))), 200) << "idle " << i;
    idle.push_back(fd);
  }
  // 40 slowloris connections: one byte a second of a request whose headers never end.
  std::vector<int> slow;
  for (int i = 0; i < kSlow; ++i) {
    const int fd = connect_to(port);
    ASSERT_GE(fd, 0) << "slow connection " << i;
    slow.push_back(fd);
  }
  std::atomic<bool> students_done{false};
  std::thread slowloris([&] {
    const std::string dribble = "GET /api/state?code=1234 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
    for (size_t k = 0; !students_done; ++k) {
      const char c = k < dribble.size() ? dribble[k] : 'a';
      for (const int fd : slow) send(fd, &c, 1, MSG_NOSIGNAL);
      for (int t = 0; t < 10 && !students_done; ++t)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a few bytes from each

  // 60 students at once: poll, answer, poll, each on its own kept-alive connection.
  std::mutex mutex;
  std::vector<double> latencies_ms;
  std::vector<std::string> failures;
  std::vector<std::thread> students;
  for (int s = 0; s < kStudents; ++s) {
    students.emplace_back([&, s] {
      const std::string client = "student" + std::to_string(s);
      const int fd = connect_to(port);
      std::vector<double> mine;
      std::string failure;
      for (int i = 0; i <= kPolls && fd >= 0 && failure.empty(); ++i) {
        const bool answer = i == kPolls / 2;
        const auto t0 = Clock::now();
        const int status = round_trip(fd, answer ? post_answer(client, s) : get_state(client));
        mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (status != 200)
          failure = client + (answer ? " answer: " : " poll: ") + std::to_string(status);
      }
      if (fd < 0) failure = client + ": cannot connect";
      if (fd >= 0) close(fd);
      std::lock_guard<std::mutex> lock(mutex);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
      if (!failure.empty()) failures.push_back(failure);
    });
  }
  for (auto& t : students) t.join();
  students_done = true;
  slowloris.join();

  for (const std::string& f : failures) ADD_FAILURE() << f;
  ASSERT_EQ(latencies_ms.size(), static_cast<size_t>(kStudents * (kPolls + 1)));
  const double median = percentile(latencies_ms, 0.5);
  const double p95 = percentile(latencies_ms, 0.95);
  const double max = *std::max_element(latencies_ms.begin(), latencies_ms.end());
  std::printf(
      "class load: %d idle + %d slow connections open; %zu requests from %d students: "
      "median %.2f ms, p95 %.2f ms, max %.2f ms\n",
      kIdle, kSlow, latencies_ms.size(), kStudents, median, p95, max);
  EXPECT_LT(max, 1000.0);
  EXPECT_EQ(room.counts().answered, kStudents);

  // The idle connections were kept, and still answer.
  std::string body;
  EXPECT_EQ(round_trip(idle.front(), get_state("idle0"), &body), 200);
  EXPECT_EQ(nlohmann::json::parse(body)["answers"], kStudents);
  for (const int fd : idle) close(fd);
  for (const int fd : slow) close(fd);
}

// Beyond the connection limit a new connection is not served: it waits in the kernel's queue
// until one of the held connections closes (an idle one does after kClassIdleSeconds), and is
// then answered; the held ones are served throughout.
TEST(ClassLoad, BeyondTheConnectionLimitANewConnectionWaitsForAPlace) {
  raise_file_limit();
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < 2 * kClassMaxConnections + 64)
    GTEST_SKIP() << "needs " << 2 * kClassMaxConnections + 64 << " file descriptors";
  ClassRoom room("1234");
  room.publish(number_step());
  ClassServer server(room);
  ASSERT_EQ(server.start("127.0.0.1", 0), "");
  std::vector<int> held;
  for (unsigned i = 0; i < kClassMaxConnections; ++i) {
    const int fd = connect_to(server.port());
    ASSERT_GE(fd, 0);
    held.push_back(fd);
  }
  // The server has accepted all of them: the last one is answered.
  ASSERT_EQ(round_trip(held.back(), get_state("last")), 200);
  const int extra = connect_to(server.port());  // the kernel takes it into the backlog
  ASSERT_GE(extra, 0);
  const std::string request = get_state("extra");
  ASSERT_EQ(send(extra, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  timeval short_wait{0, 300000};
  setsockopt(extra, SOL_SOCKET, SO_RCVTIMEO, &short_wait, sizeof short_wait);
  char byte = 0;
  EXPECT_EQ(recv(extra, &byte, 1, MSG_PEEK), -1) << "answered beyond the limit";
  EXPECT_EQ(round_trip(held.front(), get_state("first")), 200);  // the held ones are served
  // One held connection closes: the waiting one gets its place and its answer.
  close(held.back());
  held.pop_back();
  timeval wait{5, 0};
  setsockopt(extra, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  const auto t0 = Clock::now();
  char buf[4096];
  const ssize_t n = recv(extra, buf, sizeof buf, 0);
  EXPECT_GT(n, 12) << "no answer after a place freed";
  if (n > 12) {
    EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 200");
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 1.0);
  close(extra);
  for (const int fd : held) close(fd);
}

}  // namespace
}  // namespace attn
