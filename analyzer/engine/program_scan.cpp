#include "analyzer/engine/program_scan.h"

#include <clang/Basic/LangOptions.h>
#include <clang/Lex/Lexer.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "analyzer/frontend/cache.h"
#include "analyzer/frontend/frontend.h"
#include "analyzer/frontend/nvcc_args.h"

namespace gpuopt {

namespace fs = std::filesystem;

namespace {

struct Tok {
  clang::tok::TokenKind kind;
  std::string_view text;
  unsigned offset;
};

// Words after which `name(` is still a call (everything else before it that is a word is a type:
// a declaration or definition).
bool callKeyword(std::string_view w) {
  for (std::string_view k : {"return", "case", "else", "do", "throw", "co_return", "co_await", "co_yield", "sizeof",
                             "new", "delete", "not", "and", "or"})
    if (w == k) return true;
  return false;
}

std::optional<int64_t> integerLiteral(std::string_view s) {
  std::string t;
  for (char c : s)
    if (c != '\'') t += c;  // digit separators
  while (!t.empty() && (t.back() == 'u' || t.back() == 'U' || t.back() == 'l' || t.back() == 'L')) t.pop_back();
  int base = 10;
  size_t at = 0;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) base = 16, at = 2;
  else if (t.size() > 2 && t[0] == '0' && (t[1] == 'b' || t[1] == 'B')) base = 2, at = 2;
  else if (t.size() > 1 && t[0] == '0') base = 8, at = 1;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data() + at, t.data() + t.size(), v, base);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

// An argument's value when it is an integer literal, in parentheses or with a sign.
std::optional<int64_t> argumentValue(const Tok* b, const Tok* e) {
  while (e - b >= 2 && b->kind == clang::tok::l_paren && (e - 1)->kind == clang::tok::r_paren) ++b, --e;
  int64_t sign = 1;
  if (e - b == 2 && (b->kind == clang::tok::minus || b->kind == clang::tok::plus)) {
    sign = b->kind == clang::tok::minus ? -1 : 1;
    ++b;
  }
  if (e - b != 1 || b->kind != clang::tok::numeric_constant) return std::nullopt;
  auto v = integerLiteral(b->text);
  if (!v) return std::nullopt;
  return sign * *v;
}

struct FileScan {
  std::set<std::string> calledOrDeclared;
  std::unordered_set<std::string> otherUses;
};

FileScan scanOne(const std::string& file, const std::string& text, ProgramCalls& calls) {
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
  lo.CUDA = true;
  lo.LineComment = true;
  clang::Lexer lex(clang::SourceLocation(), lo, text.data(), text.data(), text.data() + text.size());
  std::vector<Tok> toks;
  clang::Token t;
  while (true) {
    bool end = lex.LexFromRawLexer(t);
    if (t.is(clang::tok::eof)) break;
    unsigned off = t.getLocation().getRawEncoding();
    if (off + t.getLength() <= text.size()) toks.push_back({t.getKind(), std::string_view(text).substr(off, t.getLength()), off});
    if (end) break;
  }
  // Lines by offset.
  std::vector<unsigned> lineStarts{0};
  for (unsigned i = 0; i < text.size(); ++i)
    if (text[i] == '\n') lineStarts.push_back(i + 1);
  auto lineOf = [&](unsigned off) {
    return static_cast<unsigned>(std::upper_bound(lineStarts.begin(), lineStarts.end(), off) - lineStarts.begin());
  };
  FileScan fs;
  using clang::tok::TokenKind;
  namespace tk = clang::tok;
  for (size_t i = 0; i < toks.size(); ++i) {
    if (toks[i].kind != tk::raw_identifier) continue;
    std::string name(toks[i].text);
    const TokenKind prev = i ? toks[i - 1].kind : tk::unknown;
    if (prev == tk::period || prev == tk::arrow) continue;  // a member
    if (i + 1 >= toks.size() || toks[i + 1].kind != tk::l_paren) {
      fs.otherUses.insert(name);
      continue;
    }
    // The word before the name (skipping a qualifier `a::b::`) decides a declaration.
    size_t j = i;
    while (j >= 2 && toks[j - 1].kind == tk::coloncolon && toks[j - 2].kind == tk::raw_identifier) j -= 2;
    if (j >= 1 && toks[j - 1].kind == tk::coloncolon) --j;  // `::f(`
    bool declaration = j >= 1 && toks[j - 1].kind == tk::raw_identifier && !callKeyword(toks[j - 1].text);
    // The arguments, split at top-level commas.
    size_t close = i + 1;
    int depth = 0;
    std::vector<std::pair<size_t, size_t>> args;
    size_t argStart = i + 2;
    for (; close < toks.size(); ++close) {
      TokenKind k = toks[close].kind;
      if (k == tk::l_paren || k == tk::l_square || k == tk::l_brace) ++depth;
      else if (k == tk::r_paren || k == tk::r_square || k == tk::r_brace) {
        if (--depth == 0) break;
      } else if (k == tk::comma && depth == 1) {
        args.push_back({argStart, close});
        argStart = close + 1;
      }
    }
    if (close >= toks.size()) continue;
    if (argStart < close || !args.empty()) args.push_back({argStart, close});
    // `T *f(int n)`, `std::vector<int> f(...)`: a pointer, reference or template return type before
    // the name, with a parameter list (a word followed by a word, `*` or `&` in an argument).
    auto paramLike = [&] {
      if (args.empty()) return true;
      for (auto [b, e] : args)
        if (e - b >= 2 && toks[b].kind == tk::raw_identifier &&
            (toks[b + 1].kind == tk::raw_identifier || toks[b + 1].kind == tk::star || toks[b + 1].kind == tk::amp))
          return true;
      return false;
    };
    if (!declaration && j >= 1 &&
        (toks[j - 1].kind == tk::star || toks[j - 1].kind == tk::amp || toks[j - 1].kind == tk::ampamp ||
         toks[j - 1].kind == tk::greater || toks[j - 1].kind == tk::tilde) &&
        paramLike())
      declaration = true;
    // A definition: the parameter list is followed by its body.
    if (close + 1 < toks.size() && toks[close + 1].kind == tk::l_brace && paramLike()) declaration = true;
    fs.calledOrDeclared.insert(name);
    if (declaration) continue;
    ProgramCallSite site;
    site.file = file;
    site.line = lineOf(toks[i].offset);
    for (auto [b, e] : args) site.args.push_back(argumentValue(toks.data() + b, toks.data() + e));
    calls.addCall(name, std::move(site));
  }
  return fs;
}

std::string readFile(const fs::path& p, uint64_t limit) {
  std::error_code ec;
  if (fs::file_size(p, ec) > limit || ec) return {};
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

void scanProgramText(const std::string& file, const std::string& text, ProgramCalls& calls) {
  FileScan fs = scanOne(file, text, calls);
  for (const auto& n : fs.otherUses)
    if (fs.calledOrDeclared.count(n)) calls.addOtherUse(n, file);
  calls.setFiles(calls.files() + 1);
}

std::shared_ptr<const ProgramCalls> scanProgram(const std::string& dbDir, const std::string& cudaPath,
                                                std::vector<std::string>* log) {
  auto start = std::chrono::steady_clock::now();
  std::string err;
  auto db = clang::tooling::CompilationDatabase::loadFromDirectory(dbDir, err);
  if (!db) return nullptr;
  // The files: each entry's, and the C, C++ and CUDA files of its folder and its -I folders.
  std::vector<std::string> files;
  std::set<std::string> seen, folders;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(p, ec);
    if (ec || !isSourceExtension(c)) return;
    if (seen.insert(c.string()).second) files.push_back(c.string());
  };
  auto outside = [&](const std::string& d) {  // the system's and the toolkit's folders
    return d.rfind("/usr/", 0) == 0 || d.rfind("/opt/", 0) == 0 || (!cudaPath.empty() && d.rfind(cudaPath, 0) == 0);
  };
  for (const auto& cmd : db->getAllCompileCommands()) {
    fs::path f = fs::path(cmd.Filename).is_absolute() ? fs::path(cmd.Filename) : fs::path(cmd.Directory) / cmd.Filename;
    add(f);
    folders.insert(f.parent_path().lexically_normal().string());
    std::vector<std::string> a = translateCompileCommand(cmd.CommandLine, cmd.Directory).args();
    for (size_t i = 0; i < a.size(); ++i) {
      std::string d;
      if (a[i] == "-I" || a[i] == "-iquote") {
        if (i + 1 < a.size()) d = a[++i];
      } else if (a[i].rfind("-I", 0) == 0) {
        d = a[i].substr(2);
      }
      if (d.empty()) continue;
      fs::path dp = fs::path(d).is_absolute() ? fs::path(d) : fs::path(cmd.Directory) / d;
      folders.insert(dp.lexically_normal().string());
    }
  }
  constexpr size_t kMaxFiles = 20000;
  for (const auto& d : folders) {
    if (outside(d)) continue;
    std::error_code ec;
    size_t n = 0;
    for (fs::directory_iterator it(d, ec), end; !ec && it != end && n < 2000; it.increment(ec), ++n)
      if (it->is_regular_file(ec)) add(it->path());
  }
  if (files.size() > kMaxFiles) files.resize(kMaxFiles);
  auto calls = std::make_shared<ProgramCalls>();
  // What it is read from, for the cache's copy (storeProgram).
  if (auto s = stampFile((fs::path(dbDir) / "compile_commands.json").string(), false)) calls->sources.push_back(*s);
  for (const auto& f : files)
    if (auto s = stampFile(f, false)) calls->sources.push_back(*s);
  for (const auto& d : folders)
    if (!outside(d))
      if (auto s = stampFolder(d, true)) calls->sources.push_back(*s);
  std::vector<FileScan> scans;
  uint64_t bytes = 0;
  for (const auto& f : files) {
    std::string text = readFile(f, 8u << 20);
    bytes += text.size();
    scans.push_back(scanOne(f, text, *calls));
  }
  std::set<std::string> known;
  for (const auto& s : scans) known.insert(s.calledOrDeclared.begin(), s.calledOrDeclared.end());
  for (size_t i = 0; i < scans.size(); ++i)
    for (const auto& n : scans[i].otherUses)
      if (known.count(n)) calls->addOtherUse(n, files[i]);
  calls->setFiles(files.size());
  if (log)
    log->push_back(fmt::format("program call sites: {} files ({} KiB) of {} lexed in {:.0f} ms", files.size(), bytes / 1024,
                               dbDir, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()));
  return calls;
}

}  // namespace gpuopt
