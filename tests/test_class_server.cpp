// Class mode's server (app/gui/model/class_server.h) on 127.0.0.1: every status of docs/cli.md's
// "Class mode" contract, the server serving on after each, no answer in the state before reveal,
// 60 devices answering at once, and the port freed by stop().
// Eigen (through the room's trace) comes before httplib.h: the resolver header httplib includes
// defines `_res`, which would rename a parameter of Eigen's templates.
// clang-format off
#include "gui/model/class_server.h"
#include "reference.h"
// clang-format on

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace attn {
namespace {

using nlohmann::json;

// Step 1 asks fear-is's score of (Fear, is) = 0.2·0.1 + 0.1·0.4 + 0.8·0.6 = 0.54; step 2 which
// key "Fear" weighs most: "is" (its score 0.54 beats 0.06 + 0.05 + 0.16 = 0.27).
ClassStep lesson_step(int i) {
  static const Lesson lesson = [] {
    const std::string text = R"({
      "format": "attention-lab-lesson", "version": 1, "title": "Server test",
      "steps": [{"title": "Scores", "example": "fear-is", "stage": "scores",
                 "question": {"kind": "number", "prompt": "Score of Fear and is?",
                              "answer": {"stage": "scores", "row": 0, "col": 1}}},
                {"title": "Weights", "stage": "weights",
                 "question": {"kind": "key", "prompt": "Which key?",
                              "answer": {"stage": "weights", "row": 0}}}]})";
    std::string error;
    const std::optional<Lesson> l = parse_lesson(text, "server-test.json", error);
    EXPECT_TRUE(l) << error;
    return *l;
  }();
  const LessonStep& l = lesson.steps.at(static_cast<size_t>(i));
  ClassStep s;
  s.index = i;
  s.title = l.title;
  s.question = l.question;
  s.trace = lesson_step_trace(l);
  s.svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>?</text></svg>";
  return s;
}
ClassStep number_step() { return lesson_step(0); }

// Sends `request` as written (no client library in between to tidy the path) and returns the
// status of the answer, or -1 when there is none.
int raw_status(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[64] = {};
    const ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    if (n >= 12 && std::string(buf, 5) == "HTTP/") status = std::atoi(buf + 9);
  }
  close(fd);
  return status;
}

// Whether a plain socket can take `port` on 127.0.0.1 (no SO_REUSEADDR: only a free port).
bool port_is_free(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd, 1) == 0;
  close(fd);
  return ok;
}

class ClassServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    room.publish(number_step());
    ASSERT_EQ(server.start("127.0.0.1", 0), "");
    ASSERT_GT(server.port(), 0);
  }
  httplib::Client client() {
    httplib::Client c("127.0.0.1", server.port());
    c.set_connection_timeout(5);
    c.set_read_timeout(5);
    return c;
  }
  // The server still answers a good request.
  void expect_serving() {
    auto c = client();
    const auto r = c.Get("/api/state?code=1234");
    ASSERT_TRUE(r) << "no answer";
    EXPECT_EQ(r->status, 200);
  }
  httplib::Result post(const json& body) {
    auto c = client();
    return c.Post("/api/answer", body.dump(), "application/json");
  }

  ClassRoom room{"1234"};
  ClassServer server{room};
};

TEST_F(ClassServerTest, ThePageIsSelfContained) {
  auto c = client();
  const auto r = c.Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  const std::string& page = r->body;
  // The file as it is in assets/class/, byte for byte (embedding splits it into literals).
  std::ifstream file(std::string(ATTN_SOURCE_DIR) + "/assets/class/student.html", std::ios::binary);
  EXPECT_EQ(page, std::string(std::istreambuf_iterator<char>(file), {}));
  EXPECT_NE(page.find("name=\"viewport\""), std::string::npos);
  EXPECT_NE(page.find("/api/state"), std::string::npos);
  EXPECT_NE(page.find("/step.svg"), std::string::npos);
  EXPECT_NE(page.find("localStorage"), std::string::npos);
  // Nothing from elsewhere: no external script, style, font or image.
  for (const char* ext : {"src=\"http", "href=\"http", "@import", "url(", "<link", "//cdn"})
    EXPECT_EQ(page.find(ext), std::string::npos) << ext;
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
}

TEST_F(ClassServerTest, StateFollowsTheContractAndHidesTheAnswer) {
  auto c = client();
  const auto r = c.Get("/api/state?code=1234");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const json j = json::parse(r->body);
  // "picture" counts the pictures published (one so far): pages fetch a new one when it moves.
  EXPECT_EQ(j, json::parse(R"({"step": 1, "title": "Scores", "question": "Score of Fear and is?",
                              "kind": "number", "choices": [], "lettered": false,
                              "answers": 0, "revealed": false, "picture": 1})"));
  EXPECT_EQ(r->body.find("0.54"), std::string::npos);
  // After Reveal the answer is there, and the page can say so.
  room.reveal();
  const auto after = c.Get("/api/state?code=1234");
  ASSERT_TRUE(after);
  EXPECT_EQ(json::parse(after->body)["revealed"], true);
  EXPECT_NE(after->body.find("0.54"), std::string::npos);
}

TEST_F(ClassServerTest, ThePictureIsTheOneGiven) {
  auto c = client();
  const auto r = c.Get("/step.svg?code=1234");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "image/svg+xml");
  EXPECT_EQ(r->body, "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>?</text></svg>");
  // A picture drawn later (the app draws it on a worker) replaces it, and the state's picture
  // number moves so pages fetch it again.
  room.set_picture("<svg xmlns=\"http://www.w3.org/2000/svg\"/>");
  EXPECT_EQ(c.Get("/step.svg?code=1234")->body, "<svg xmlns=\"http://www.w3.org/2000/svg\"/>");
  EXPECT_EQ(json::parse(c.Get("/api/state?code=1234")->body)["picture"], 2);
}

TEST_F(ClassServerTest, AnAnswerIsCountedAndReplaced) {
  const auto r = post({{"code", "1234"}, {"client", "phone1"}, {"answer", "0.5"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body), json({{"ok", true}}));
  const auto again =
      post({{"code", "1234"}, {"client", "phone1"}, {"answer", "0.54"}, {"name", "Ana"}});
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
  EXPECT_EQ(room.counts().answered, 1);
  EXPECT_EQ(room.distribution().right, 1);
}

TEST_F(ClassServerTest, AWrongCodeIs403) {
  auto c = client();
  for (const char* path :
       {"/api/state?code=9999", "/api/state", "/step.svg?code=12345", "/step.svg"}) {
    const auto r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 403) << path;
    expect_serving();
  }
  const auto r = post({{"code", "0000"}, {"client", "phone1"}, {"answer", "0.5"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_EQ(room.counts().answered, 0);
  expect_serving();
}

TEST_F(ClassServerTest, ABodyOver4KBIs413) {
  json big = {{"code", "1234"}, {"client", "phone1"}, {"answer", "0.5"}};
  big["name"] = std::string(4100, 'a');
  const auto r = post(big);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  expect_serving();
  expect_serving();
  // Just under the limit is read (and refused for its long name, with the reason).
  big["name"] = std::string(4000, 'a');
  ASSERT_LE(big.dump().size(), 4096u);
  const auto under = post(big);
  ASSERT_TRUE(under);
  EXPECT_EQ(under->status, 400);
  EXPECT_NE(under->body.find("the name is too long"), std::string::npos) << under->body;
}

// Only a plain body of declared length is read: httplib would take a chunked body, one without a
// length or a compressed one whole, whatever its size.
TEST_F(ClassServerTest, BodiesWithoutALengthOrCompressedAreRefused) {
  const std::string head =
      "POST /api/answer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Connection: close\r\n";
  const std::string body = R"({"code": "1234", "client": "phone1", "answer": "0.5"})";
  std::string chunked = head + "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 5; ++i) chunked += "400\r\n" + std::string(1024, ' ') + "\r\n";
  chunked += "0\r\n\r\n";
  EXPECT_EQ(raw_status(server.port(), chunked), 411);
  expect_serving();
  EXPECT_EQ(raw_status(server.port(), head + "\r\n" + body), 411);  // no Content-Length
  expect_serving();
  EXPECT_EQ(raw_status(server.port(), head + "Content-Encoding: gzip\r\nContent-Length: " +
                                          std::to_string(body.size()) + "\r\n\r\n" + body),
            415);
  expect_serving();
  // The same body, plain and of declared length, is taken.
  EXPECT_EQ(raw_status(server.port(),
                       head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body),
            200);
  EXPECT_EQ(room.counts().answered, 1);
}

TEST_F(ClassServerTest, MalformedJsonIs400) {
  auto c = client();
  for (const char* body : {"{", "not json", "", "[1, 2]", "\"text\"", "{\"code\": 1234}"}) {
    const auto r = c.Post("/api/answer", body, "application/json");
    ASSERT_TRUE(r) << body;
    EXPECT_EQ(r->status, 400) << body;
    expect_serving();
  }
  const auto r = c.Post("/api/answer", "{\"code\": ", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["error"], "malformed JSON");
}

TEST_F(ClassServerTest, AnInvalidAnswerIs400WithTheReason) {
  const auto r = post({{"code", "1234"}, {"client", "phone1"}, {"answer", "a lot"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"], "Type a number ('a lot' is not a number).");
  const auto missing = post({{"code", "1234"}, {"client", "phone1"}});
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  const auto no_client = post({{"code", "1234"}, {"answer", "0.5"}});
  ASSERT_TRUE(no_client);
  EXPECT_EQ(no_client->status, 400);
  EXPECT_EQ(room.counts().answered, 0);
  expect_serving();
}

TEST_F(ClassServerTest, EveryOtherPathIs404) {
  const int port = server.port();
  for (const char* line :
       {"GET /index.html", "GET /api", "GET /api/state/", "GET /api/answer", "GET /../etc/passwd",
        "GET /%2e%2e/etc/passwd", "GET /%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "GET /..%2f..%2fetc/passwd", "GET //etc/passwd", "GET /step.svg/../api/state?code=1234",
        "GET /assets/class/student.html", "GET /student.html", "GET /CMakeLists.txt",
        "POST /api/state?code=1234", "DELETE /", "PUT /api/answer"}) {
    const std::string request = std::string(line) +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                                "Connection: close\r\n\r\n";
    EXPECT_EQ(raw_status(port, request), 404) << line;
    expect_serving();
  }
}

TEST_F(ClassServerTest, AFloodFromOneDeviceIs429AndOthersGoOn) {
  int limited = 0;
  for (int i = 0; i < 20; ++i) {
    const auto r = post({{"code", "1234"}, {"client", "flood"}, {"answer", "0.5"}});
    ASSERT_TRUE(r);
    limited += r->status == 429 ? 1 : 0;
  }
  // A burst of 5, then 5 a second: at most 5 + 5·T of the 20 are taken in T seconds, and 20
  // requests to this machine take far less than 2 s, so at least 5 are refused.
  EXPECT_GE(limited, 5);
  const auto other = post({{"code", "1234"}, {"client", "quiet"}, {"answer", "0.5"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 200);
  expect_serving();
}

TEST_F(ClassServerTest, SixtyDevicesAnswerAtOnce) {
  std::atomic<int> ok{0};
  std::mutex m;
  std::string failures;
  std::vector<std::thread> devices;
  for (int i = 0; i < 60; ++i)
    devices.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", server.port());
      c.set_read_timeout(10);
      const json body = {
          {"code", "1234"}, {"client", "dev" + std::to_string(i)}, {"answer", "0.5"}};
      const auto r = c.Post("/api/answer", body.dump(), "application/json");
      if (r && r->status == 200) return void(++ok);
      std::lock_guard<std::mutex> lock(m);
      failures +=
          (r ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error())) + "\n";
    });
  for (std::thread& t : devices) t.join();
  // Debian's httplib listens with a backlog of 5; without the server widening it, connections
  // beyond it were dropped and most of these failed ("Read").
  EXPECT_EQ(ok.load(), 60) << failures;
  EXPECT_EQ(room.counts().answered, 60);
  EXPECT_EQ(room.counts().joined, 60);
}

// The page's own script, run by Node against the server, plays a student while this test plays
// the teacher (tests/class_page_test.js): it answers, follows a step change within a second,
// answers a choice and sees the reveal.
TEST_F(ClassServerTest, APageFollowsTheLesson) {
  if (std::system("command -v node >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "node not installed (apt-get install nodejs)";
  std::string out;
  int rc = -1;
  std::thread student([&] {
    const std::string command = "node '" + std::string(ATTN_SOURCE_DIR) +
                                "/tests/class_page_test.js' " + std::to_string(server.port()) +
                                " 2>&1";
    FILE* p = popen(command.c_str(), "r");
    if (!p) return;
    char buf[256];
    while (fgets(buf, sizeof buf, p)) out += buf;
    rc = pclose(p);
  });
  const auto wait_for_answer = [&] {
    for (int i = 0; i < 1000 && room.counts().answered < 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return room.counts().answered;
  };
  EXPECT_EQ(wait_for_answer(), 1);
  EXPECT_EQ(room.distribution().right, 1);  // 0.54
  room.publish(lesson_step(1));
  EXPECT_EQ(wait_for_answer(), 1);
  EXPECT_EQ(room.distribution().right, 1);  // "is"
  room.reveal();
  student.join();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ok\n"), std::string::npos) << out;
}

TEST_F(ClassServerTest, StopFreesThePort) {
  const int port = server.port();
  EXPECT_FALSE(port_is_free(port));
  server.stop();
  EXPECT_FALSE(server.running());
  EXPECT_EQ(raw_status(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"), -1);
  EXPECT_TRUE(port_is_free(port));
  // And class mode can start again on it.
  EXPECT_EQ(server.start("127.0.0.1", port), "");
  expect_serving();
}

TEST(ClassServer, ATakenPortIsAnError) {
  // Hold a port with a plain listening socket.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ClassRoom room("1234");
  ClassServer server(room);
  const std::string error = server.start("127.0.0.1", port);
  EXPECT_EQ(error, "cannot listen on 127.0.0.1:" + std::to_string(port) +
                       ": the port is in use, or the address is not one of this computer's");
  EXPECT_FALSE(server.running());
  EXPECT_NE(server.start("127.0.0.1", 70000), "");
  close(fd);
}

TEST(ClassServer, TheDestructorStops) {
  ClassRoom room("1234");
  int port = 0;
  {
    ClassServer server(room);
    ASSERT_EQ(server.start("127.0.0.1", 0), "");
    port = server.port();
    EXPECT_FALSE(port_is_free(port));
  }
  EXPECT_TRUE(port_is_free(port));
}

TEST(ClassServer, TheUrlCarriesTheCode) {
  EXPECT_EQ(class_url("192.168.1.20", 8765, "0420"), "http://192.168.1.20:8765/?code=0420");
  for (const std::string& a : local_ipv4_addresses()) EXPECT_NE(a.rfind("127.", 0), 0u) << a;
}

}  // namespace
}  // namespace attn
