// Issue 33, the Clang-free half: text that is not UTF-8 in every output format, names that cannot
// be resolved, result-cache entries that were damaged, and --fix writes that keep the file whole.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/frontend/cache.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/report/fix.h"
#include "analyzer/report/output.h"
#include "analyzer/report/safe_write.h"
#include "analyzer/report/utf8.h"

using namespace gpuopt;
namespace fs = std::filesystem;

namespace {
std::string dirFor(const std::string& name) {
  auto d = fs::temp_directory_path() / ("gpuopt-robust-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}
void put(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
std::string get(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
const std::string kFFFD = "\xEF\xBF\xBD";

// A finding whose message, note, fix and file name quote bytes that are not UTF-8.
std::vector<FileResult> latin1Results(const std::string& dir) {
  FileResult r;
  r.file = dir + "/k\xe9.cu";
  Diagnostic d;
  d.ruleId = "uncoalesced-access";
  d.severity = Severity::Warning;
  d.span = {{r.file, 3, 5}, 3, 20};
  d.message = "a[threadIdx.x * 32 + sizeof(\"\xff\")] reads 32 sectors";
  d.notes.push_back({d.span, "caf\xe9"});
  d.fixHint = "use \xc0\xaf";  // an overlong '/'
  r.diags.push_back(d);
  r.errors.push_back({r.file, "error \xff"});
  return {r};
}
}  // namespace

TEST(Utf8, InvalidSequencesAreReplacedOrPercentEncoded) {
  EXPECT_TRUE(isValidUtf8("é ∑ 𝄞 plain"));
  for (const char* bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"})
    EXPECT_FALSE(isValidUtf8(bad)) << bad;
  EXPECT_EQ(toValidUtf8("é ok"), "é ok");
  EXPECT_EQ(toValidUtf8("a\xffz"), "a" + kFFFD + "z");
  EXPECT_EQ(toValidUtf8("a\xe2\x82z"), "a" + kFFFD + "z");            // a truncated sequence: one
  EXPECT_EQ(toValidUtf8("\xc0\xaf"), kFFFD + kFFFD);                 // an overlong form: each byte
}

TEST(Output, TextThatIsNotUtf8NeverAbortsJsonSarifOrGithub) {
  std::string dir = dirFor("utf8");
  OutputContext oc;
  oc.cwd = dir;
  oc.toolVersion = "1";
  auto results = latin1Results(dir);
  std::ostringstream js, sarif, gh;
  ASSERT_NO_THROW(writeJson(js, results, oc));
  ASSERT_NO_THROW(writeSarif(sarif, results, oc));
  ASSERT_NO_THROW(writeGithub(gh, results, oc));
  std::ostringstream stats;
  ASSERT_NO_THROW(writeStatistics(stats, results, true));
  auto j = nlohmann::json::parse(js.str());
  auto& f = j["files"][0];
  EXPECT_EQ(f["file"], "k" + kFFFD + ".cu");
  EXPECT_EQ(f["findings"][0]["message"], "a[threadIdx.x * 32 + sizeof(\"" + kFFFD + "\")] reads 32 sectors");
  EXPECT_EQ(f["findings"][0]["notes"][0]["message"], "caf" + kFFFD);
  EXPECT_EQ(f["errors"][0]["message"], "error " + kFFFD);
  auto s = nlohmann::json::parse(sarif.str());
  auto& res = s["runs"][0]["results"][0];
  EXPECT_NE(res["message"]["text"].get<std::string>().find(kFFFD), std::string::npos);
  // In a URI the byte is percent-encoded (lossless).
  EXPECT_EQ(res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "k%E9.cu");
  EXPECT_TRUE(isValidUtf8(gh.str())) << gh.str();
  EXPECT_NE(gh.str().find("sizeof(\"" + kFFFD + "\")"), std::string::npos) << gh.str();
  fs::remove_all(dir);
}

TEST(Output, ASymbolicLinkLoopKeepsItsNameInEveryFormat) {
  std::string dir = dirFor("loop");
  fs::create_symlink("loop.cu", dir + "/loop.cu");  // points at itself: ELOOP
  EXPECT_EQ(relativePath(dir + "/loop.cu", dir), "loop.cu");
  FileResult r;
  r.file = dir + "/loop.cu";
  r.errors.push_back({r.file, "cannot read: Too many levels of symbolic links"});
  OutputContext oc;
  oc.cwd = dir;
  std::ostringstream js, sarif, gh;
  writeJson(js, {r}, oc);
  writeSarif(sarif, {r}, oc);
  writeGithub(gh, {r}, oc);
  EXPECT_EQ(nlohmann::json::parse(js.str())["files"][0]["errors"][0]["file"], "loop.cu");
  EXPECT_EQ(nlohmann::json::parse(sarif.str())["runs"][0]["invocations"][0]["toolExecutionNotifications"][0]["locations"]
                                                 [0]["physicalLocation"]["artifactLocation"]["uri"],
            "loop.cu");
  EXPECT_NE(gh.str().find("::error file=loop.cu,"), std::string::npos) << gh.str();
  fs::remove_all(dir);
}

TEST(ResultCache, AnEntryWithAFlippedBitOrEmptiedFindingsIsAMiss) {
  CachedAnalysis a;
  a.result.file = "k.cu";
  a.result.kernels = 1;
  Diagnostic d;
  d.ruleId = "bank-conflict";
  d.severity = Severity::Warning;
  d.span = {{"k.cu", 7, 3}, 7, 9};
  d.message = "32-way bank conflict";
  a.result.diags.push_back(d);
  a.result.sourceHashes["k.cu"] = "abc";
  std::vector<FileStamp> deps = {{"k.cu", 10, 20, "h"}};
  std::string text = resultEntryText("KEY", deps, a);
  auto back = parseResultEntry(text, "KEY");
  ASSERT_TRUE(back);
  EXPECT_EQ(fileResultToJson(back->analysis.result), fileResultToJson(a.result));
  EXPECT_EQ(back->deps.size(), 1u);
  EXPECT_FALSE(parseResultEntry(text, "OTHER KEY"));
  // Every single-bit flip anywhere in the entry is caught (the line, the message, the checksum).
  size_t caught = 0, flips = 0;
  for (size_t i = 0; i < text.size(); i += 7)
    for (int bit = 0; bit < 8; bit += 3) {
      std::string t = text;
      t[i] = static_cast<char>(t[i] ^ (1 << bit));
      ++flips;
      caught += !parseResultEntry(t, "KEY");
    }
  EXPECT_EQ(caught, flips);
  // The findings emptied (the entry edited to say "nothing found"): a miss, not exit 0.
  std::string emptied = text;
  size_t at = emptied.find("\"diags\":[");
  ASSERT_NE(at, std::string::npos);
  size_t end = emptied.find("],\"errors\"", at);
  ASSERT_NE(end, std::string::npos);
  emptied.replace(at, end + 1 - at, "\"diags\":[]");
  EXPECT_FALSE(parseResultEntry(emptied, "KEY"));
  EXPECT_FALSE(parseResultEntry("", "KEY"));
  EXPECT_FALSE(parseResultEntry(text.substr(0, text.size() / 2), "KEY"));
}

TEST(Fix, WritesThroughSymbolicLinksAndKeepsHardLinksModeAndOwner) {
  std::string dir = dirFor("fixlinks");
  std::string text = "__shared__ float t[32][32];\n", fixed = "__shared__ float t[32][32 + 1];\n";
  Diagnostic d;
  d.fixIts.push_back({{{"x", 1, 24}, 1, 25}, "32 + 1"});
  std::ostringstream out;
  std::string err;
  // Through a symbolic link: the target changes, the link stays a link.
  fs::create_directories(dir + "/real");
  put(dir + "/real/k.cu", text);
  fs::create_symlink("real/k.cu", dir + "/link.cu");
  ::chmod((dir + "/real/k.cu").c_str(), 0640);
  ASSERT_TRUE(applyFixes(dir + "/link.cu", {d}, false, out, err, "", hashText(text))) << err;
  EXPECT_TRUE(fs::is_symlink(dir + "/link.cu"));
  EXPECT_EQ(get(dir + "/real/k.cu"), fixed);
  struct stat st;
  ASSERT_EQ(::stat((dir + "/real/k.cu").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // A hard link: both names see the fix (one inode).
  put(dir + "/h.cu", text);
  fs::create_hard_link(dir + "/h.cu", dir + "/h2.cu");
  ASSERT_TRUE(applyFixes(dir + "/h.cu", {d}, false, out, err, "", hashText(text))) << err;
  EXPECT_EQ(get(dir + "/h2.cu"), fixed);
  EXPECT_EQ(fs::hard_link_count(dir + "/h.cu"), 2u);
  // Run as root, a user's file stays the user's.
  if (::geteuid() == 0) {
    put(dir + "/u.cu", text);
    ASSERT_EQ(::chown((dir + "/u.cu").c_str(), 4321, 4322), 0);
    ASSERT_TRUE(applyFixes(dir + "/u.cu", {d}, false, out, err, "", hashText(text))) << err;
    ASSERT_EQ(::stat((dir + "/u.cu").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_gid, 4322u);
    EXPECT_EQ(get(dir + "/u.cu"), fixed);
  }
  for (auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temp file left: " << e.path();
  fs::remove_all(dir);
}

TEST(Fix, AFileThatChangedSinceTheAnalysisIsLeftAlone) {
  std::string dir = dirFor("fixchanged");
  std::string text = "__shared__ float t[32][32];\n";
  Diagnostic d;
  d.fixIts.push_back({{{"x", 1, 24}, 1, 25}, "32 + 1"});
  std::ostringstream out;
  std::string err;
  bool skipped = false;
  std::string edited = "// a line the user added\n" + text;
  put(dir + "/k.cu", edited);
  EXPECT_FALSE(applyFixes(dir + "/k.cu", {d}, false, out, err, "", hashText(text), &skipped));
  EXPECT_TRUE(skipped);
  EXPECT_NE(err.find("changed since it was analysed"), std::string::npos) << err;
  EXPECT_EQ(get(dir + "/k.cu"), edited) << "stale offsets must not be applied";
  // A launch written `<< <` was read joined by the parse: the same text, fixed.
  std::string chevrons = "__shared__ float t[32][32];\nvoid h() { k<< <1, 1>>>(); }\n";
  std::string joined = chevrons;
  ASSERT_TRUE(normalizeLaunchChevrons(joined));
  put(dir + "/c.cu", chevrons);
  EXPECT_TRUE(applyFixes(dir + "/c.cu", {d}, false, out, err, "", hashText(joined), &skipped)) << err;
  EXPECT_EQ(get(dir + "/c.cu").substr(0, 32), "__shared__ float t[32][32 + 1];\n");
  // The file changes between the read and the write: nothing is written.
  put(dir + "/w.cu", text);
  EXPECT_EQ(replaceFileContents(dir + "/w.cu", "something else", "new", err), WriteOutcome::Changed);
  EXPECT_EQ(get(dir + "/w.cu"), text);
  fs::remove_all(dir);
}

TEST(Fix, StaleTemporaryFilesOfDeadRunsAreRemovedAndLiveOnesKept) {
  std::string dir = dirFor("stale");
  // A process that has ended: its PID names the stale files.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  std::string d = std::to_string(dead), live = std::to_string(::getppid());
  put(dir + "/k.cu.gpuopt-lint.tmp." + d, "x");
  put(dir + "/k.cu.gpuopt-lint.tmp." + live, "x");
  put(dir + "/abc.pch.tmp." + d + "-1a2b3c4d.140104110964736.tmp", "x");  // Clang's own name
  put(dir + "/abc.json.tmp." + d + ".140104110964736.3", "x");
  put(dir + "/k.cu", "unrelated");
  put(dir + "/notes.tmp.txt", "unrelated");
  EXPECT_EQ(removeDeadTemporaries(dir, "k.cu.gpuopt-lint"), 1u);
  EXPECT_TRUE(fs::exists(dir + "/k.cu.gpuopt-lint.tmp." + live)) << "a running process's file stays";
  EXPECT_EQ(removeDeadTemporaries(dir, ""), 2u);
  EXPECT_TRUE(fs::exists(dir + "/k.cu"));
  EXPECT_TRUE(fs::exists(dir + "/notes.tmp.txt"));
  fs::remove_all(dir);
}

// A stored result depends on the source files the includer search lists; outside the repository
// there are none of the project's, and a busy /tmp or home folder would make every result stale.
TEST(Frontend, TheIncluderSearchStopsAtTheRepositoryRoot) {
  // outside/main.cu includes repo/src/k.cu, but repo is a repository (.git): the search lists
  // repo/src and repo, never outside, so the stored result of k.cu does not depend on it.
  std::string d = dirFor("incroot") + "/outside";
  fs::create_directories(d + "/repo/.git");
  fs::create_directories(d + "/repo/src");
  put(d + "/repo/src/k.cu", "__global__ void k(float* a) { a[threadIdx.x] = 0; }\n");
  put(d + "/main.cu", "#include \"repo/src/k.cu\"\nint main() {}\n");
  IncluderScan scan;
  EXPECT_TRUE(findIncluders(d + "/repo/src/k.cu", {}, {}, 3, &scan).empty());
  std::string outside = fs::weakly_canonical(d).string();
  for (const auto& f : scan.folders) EXPECT_NE(f, outside);
  EXPECT_NE(std::find(scan.folders.begin(), scan.folders.end(), fs::weakly_canonical(d + "/repo").string()),
            scan.folders.end());
  // Without the repository marker the same layout finds it.
  fs::remove_all(d + "/repo/.git");
  auto found = findIncluders(d + "/repo/src/k.cu", {}, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(fs::path(found[0]).filename(), "main.cu");
}
