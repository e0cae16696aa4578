#include "analyzer/profile/profile.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace gpuopt::profile {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// CSV (RFC 4180: quoted fields, doubled quotes, newlines inside quotes). ncu also prints
// ==WARNING== lines into the same stream; they come back as one-field rows.
namespace {
std::vector<std::vector<std::string>> parseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
        else quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true, any = true;
    } else if (c == ',') {
      row.push_back(std::move(field)), field.clear(), any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) row.push_back(std::move(field));
      if (!row.empty()) rows.push_back(std::move(row));
      row.clear(), field.clear(), any = false;
    } else {
      field += c;
    }
  }
  if (any || !field.empty()) row.push_back(std::move(field));
  if (!row.empty()) rows.push_back(std::move(row));
  return rows;
}

// "1,024" -> 1024, "-" or "" -> def. ncu prints thousands separators in some pages.
double number(const std::string& s, double def = 0) {
  std::string t;
  for (char c : s)
    if (c != ',' && c != ' ') t += c;
  if (t.empty() || t == "-" || t == "N/A") return def;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  return end && *end == '\0' ? v : def;
}

std::string readFile(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ncu's own messages (==WARNING==, ==ERROR==, ==PROF==) mixed into an export: taken out before the
// CSV is read (they contain commas and quotes).
std::string withoutMessages(const std::string& text, std::vector<std::string>* messages) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("==WARNING==", 0) == 0 || line.rfind("==ERROR==", 0) == 0 || line.rfind("==PROF==", 0) == 0) {
      if (messages) messages->push_back(line);
      continue;
    }
    out += line;
    out += '\n';
  }
  return out;
}

// "void k<(int)32, (bool)1>(float *)" and "void k<32, 1>(float *)" (the raw page's spelling) alike.
std::string normalizeFunction(std::string f) {
  static const std::regex cast(R"(\((unsigned |signed |long |short )*(int|long|char|bool|short|unsigned)\))");
  return std::regex_replace(f, cast, "");
}

bool isNcuMessage(const std::vector<std::string>& row) {
  return row.size() == 1 && (row[0].rfind("==WARNING==", 0) == 0 || row[0].rfind("==ERROR==", 0) == 0 ||
                             row[0].rfind("==PROF==", 0) == 0);
}
}  // namespace

std::string baseName(const std::string& function) {
  // Cut the parameter list: the first '(' outside template brackets.
  int depth = 0;
  size_t end = function.size();
  for (size_t i = 0; i < function.size(); ++i) {
    char c = function[i];
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (c == '(' && depth == 0) { end = i; break; }
  }
  std::string s = function.substr(0, end);
  // Drop template arguments.
  std::string out;
  depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    else if (c == '>') --depth;
    else if (depth == 0) out += c;
  }
  // Return type and namespaces.
  if (auto sp = out.find_last_of(' '); sp != std::string::npos) out = out.substr(sp + 1);
  if (auto ns = out.rfind("::"); ns != std::string::npos) out = out.substr(ns + 2);
  return out;
}

bool importSourceCsv(const std::string& text, Profile& p, std::string& error) {
  std::vector<std::string> messages;
  auto rows = parseCsv(withoutMessages(text, &messages));
  for (const auto& m : messages) {
    p.warnings.push_back(m);
    if (m.find("No lineinfo available") != std::string::npos) p.noLineInfo = true;
  }
  std::map<std::string, size_t> col;
  std::string file, function;
  Kernel* k = nullptr;
  Line* line = nullptr;
  std::set<std::string> seen;  // instruction addresses of the current line (ncu repeats them)
  auto get = [&](const std::vector<std::string>& r, const char* name, double def = -1) {
    auto it = col.find(name);
    return it == col.end() || it->second >= r.size() ? def : number(r[it->second], def);
  };
  auto text_ = [&](const std::vector<std::string>& r, const char* name, size_t nth = 0) {
    // "Source" appears twice (CUDA text, then SASS text): nth picks.
    size_t found = 0;
    for (const auto& [n, i] : col)
      if (n == name && i < r.size() && found++ == nth) return r[i];
    return std::string();
  };
  size_t sourceCol2 = std::string::npos;
  unsigned lineRows = 0;
  for (const auto& r : rows) {
    if (isNcuMessage(r)) {
      p.warnings.push_back(r[0]);
      if (r[0].find("No lineinfo available") != std::string::npos) p.noLineInfo = true;
      continue;
    }
    if (r.size() == 2 && r[0] == "File Path") {
      file = r[1];
      continue;
    }
    if (r.size() == 2 && r[0] == "File Name") {  // --print-source cuda: the source text only
      file = r[1];
      continue;
    }
    if (r.size() == 2 && r[0] == "Function Name") {
      // A result's lines from several files come as consecutive blocks of one function.
      if (!k || r[1] != function) {
        p.kernels.push_back({});
        k = &p.kernels.back();
        k->function = r[1];
        k->name = baseName(r[1]);
      }
      function = r[1];
      line = nullptr;
      continue;
    }
    if (!r.empty() && r[0] == "Line No") {
      col.clear();
      sourceCol2 = std::string::npos;
      for (size_t i = 0; i < r.size(); ++i) {
        if (r[i] == "Source" && col.count("Source")) sourceCol2 = i;
        else col.emplace(r[i], i);
      }
      continue;
    }
    if (col.empty()) continue;
    if (!k) {
      error = "source page without a \"Function Name\" row: not an export of `ncu --page source --csv "
              "--print-source cuda,sass`";
      return false;
    }
    if (!r.empty() && !r[0].empty()) {  // a CUDA source line
      k->lines.push_back({});
      line = &k->lines.back();
      line->file = file;
      line->line = static_cast<unsigned>(number(r[0]));
      line->source = text_(r, "Source");
      line->executed = get(r, "Instructions Executed", 0);
      line->threadExecuted = get(r, "Thread Instructions Executed", 0);
      line->samples = get(r, "Warp Stall Sampling (All Samples)", 0);
      k->samples += line->samples;
      seen.clear();
      ++lineRows;
      continue;
    }
    if (!line || r.size() < 2) continue;  // SASS without a source line
    Instruction in;
    in.address = text_(r, "Address");
    if (!seen.insert(in.address).second) continue;
    if (sourceCol2 < r.size()) in.sass = r[sourceCol2];
    in.executed = get(r, "Instructions Executed", 0);
    in.threadExecuted = get(r, "Thread Instructions Executed", 0);
    in.predicatedOn = get(r, "Predicated-On Thread Instructions Executed", in.threadExecuted);
    in.samples = get(r, "Warp Stall Sampling (All Samples)", 0);
    in.space = text_(r, "Address Space");
    in.op = text_(r, "Access Operation");
    in.sharedWavefronts = get(r, "L1 Wavefronts Shared");
    in.sharedIdeal = get(r, "L1 Wavefronts Shared Ideal");
    in.sharedWays = get(r, "L1 Conflicts Shared N-Way");
    in.sectors = get(r, "L2 Theoretical Sectors Global");
    in.sectorsIdeal = get(r, "L2 Theoretical Sectors Global Ideal");
    line->instructions.push_back(std::move(in));
  }
  if (!p.kernels.empty() && lineRows == 0 && !p.noLineInfo) {
    error = "the source page has kernels but no source lines";
    return false;
  }
  return true;
}

bool importRawCsv(const std::string& text, Profile& p, std::string& error) {
  auto rows = parseCsv(withoutMessages(text, nullptr));
  std::erase_if(rows, isNcuMessage);
  if (rows.size() < 2 || rows[0].empty() || rows[0][0] != "ID") {
    error = "not an export of `ncu --page raw --csv` (no \"ID\" header)";
    return false;
  }
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < rows[0].size(); ++i) col.emplace(rows[0][i], i);
  auto need = [&](const char* n) { return col.count(n) ? col[n] : std::string::npos; };
  size_t name = need("Kernel Name"), block = need("Block Size"), dur = need("gpu__time_duration.sum"),
         dev = need("device__attribute_display_name");
  if (name == std::string::npos) {
    error = "raw page without a \"Kernel Name\" column";
    return false;
  }
  // Row 1 holds the units ("us", "ns", "msecond", ...).
  double scale = 1.0;
  if (dur != std::string::npos && dur < rows[1].size()) {
    const std::string& u = rows[1][dur];
    scale = (u == "ns" || u == "nsecond") ? 1e-3 : (u == "ms" || u == "msecond") ? 1e3 : (u == "s" || u == "second") ? 1e6 : 1.0;
  }
  for (size_t i = 2; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (name >= r.size()) continue;
    std::string fn = r[name];
    std::string norm = normalizeFunction(fn);
    auto it = std::find_if(p.kernels.begin(), p.kernels.end(),
                           [&](const Kernel& k) { return k.function == fn || normalizeFunction(k.function) == norm; });
    if (it == p.kernels.end()) {
      p.kernels.push_back({});
      it = p.kernels.end() - 1;
      it->function = fn;
      it->name = baseName(fn);
    }
    ++it->launches;
    if (block != std::string::npos && block < r.size()) {
      std::array<unsigned, 3> b{1, 1, 1};
      unsigned n = 0;
      std::string digits;
      for (char c : r[block] + ",") {
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
        else if ((c == ',' || c == ')') && !digits.empty() && n < 3) b[n++] = static_cast<unsigned>(std::stoul(digits)), digits.clear();
      }
      if (n > 0 && std::find(it->blocks.begin(), it->blocks.end(), b) == it->blocks.end()) it->blocks.push_back(b);
    }
    if (dur != std::string::npos && dur < r.size()) {
      double d = number(r[dur], -1);
      if (d >= 0) it->durationUs = std::max(0.0, it->durationUs) + d * scale;
    }
    if (dev != std::string::npos && dev < r.size() && p.device.empty()) p.device = r[dev];
  }
  return true;
}

int importExport(const std::string& path, Profile& p, std::string& error) {
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(path, ec)) {
    for (const char* n : {"source.csv", "raw.csv"})
      if (fs::exists(fs::path(path) / n, ec)) files.push_back((fs::path(path) / n).string());
    if (files.empty()) {
      error = path + ": no source.csv or raw.csv in this folder (write them with `ncu -i REPORT --page source --csv "
                     "--print-source cuda,sass > source.csv` and `ncu -i REPORT --page raw --csv > raw.csv`)";
      return 2;
    }
  } else if (fs::exists(path, ec)) {
    files.push_back(path);
  } else {
    error = path + ": no such file or folder";
    return 2;
  }
  bool sawSource = false;
  for (const auto& f : files) {
    bool ok = false;
    std::string text = readFile(f, ok);
    if (!ok) {
      error = f + ": cannot be read";
      return 2;
    }
    // Which page: the raw page starts with "ID", the source page with "File Path" (or warnings).
    auto firstRows = parseCsv(withoutMessages(text.substr(0, std::min<size_t>(text.size(), 4096)), nullptr));
    std::erase_if(firstRows, isNcuMessage);
    std::string err;
    bool isRaw = !firstRows.empty() && !firstRows[0].empty() && firstRows[0][0] == "ID";
    if (isRaw ? !importRawCsv(text, p, err) : !importSourceCsv(text, p, err)) {
      error = f + ": " + err;
      return 2;
    }
    if (!isRaw) {
      sawSource = true;
      if (firstRows.empty() && !p.noLineInfo && p.warnings.empty()) {
        error = f + ": empty, or not an Nsight Compute CSV export";
        return 2;
      }
    }
  }
  bool anyLines = std::any_of(p.kernels.begin(), p.kernels.end(), [](const Kernel& k) { return !k.lines.empty(); });
  if (sawSource && p.noLineInfo && !anyLines) {
    error = "the profiled program has no line information: rebuild it with nvcc -lineinfo (keeps optimisation; "
            "add it to CMAKE_CUDA_FLAGS or your nvcc command line) and profile again";
    return kNoLineInfo;
  }
  if (p.kernels.empty()) {
    error = "the profile holds no kernel: the program launched none, or no launch matched the kernel filter";
    return kNoKernels;
  }
  if (!sawSource) {
    error = "only the raw page was given: per-line counters need the source page (source.csv)";
    return 2;
  }
  return 0;
}

std::map<std::string, std::vector<std::array<unsigned, 3>>> blockShapes(const Profile& p) {
  std::map<std::string, std::vector<std::array<unsigned, 3>>> out;
  for (const auto& k : p.kernels)
    for (const auto& b : k.blocks) {
      auto& v = out[k.name];
      if (std::find(v.begin(), v.end(), b) == v.end()) v.push_back(b);
    }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Join
namespace {

// Path components, for suffix matching ("/work/main/samples/x.cu" ~ "samples/x.cu").
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& c : fs::path(path).lexically_normal()) {
    std::string s = c.string();
    if (!s.empty() && s != "/" && s != ".") out.push_back(s);
  }
  return out;
}

size_t commonSuffix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

struct LineRef {
  const Kernel* kernel;
  const Line* line;
};

// Aggregates of one kind of memory instruction on a line.
struct MemFigures {
  double requests = 0, wavefronts = 0, ideal = 0;  // shared: wavefronts; global: sectors
  double executed = 0;
  bool any = false;
  double ratio() const { return ideal > 0 ? wavefronts / ideal : 0; }
  double perRequest() const { return requests > 0 ? wavefronts / requests : 0; }
  double idealPerRequest() const { return requests > 0 ? ideal / requests : 0; }
};

MemFigures memFigures(const std::vector<LineRef>& refs, bool shared, int store /* -1 any, 0 load, 1 store */) {
  MemFigures m;
  for (const auto& r : refs)
    for (const auto& in : r.line->instructions) {
      if (in.space != (shared ? "Shared" : "Global")) continue;
      bool isStore = in.op == "Store";
      if (store >= 0 && isStore != (store == 1)) continue;
      double w = shared ? in.sharedWavefronts : in.sectors, id = shared ? in.sharedIdeal : in.sectorsIdeal;
      if (w < 0 || id < 0) continue;
      m.any = true;
      m.executed += in.executed;
      m.wavefronts += w;
      m.ideal += id;
      // Requests: warp-level instructions executed (for shared accesses the ideal wavefronts, one
      // per request of up to 4 bytes per lane, since fully predicated-off warps issue nothing).
      m.requests += shared ? id : in.executed;
    }
  return m;
}

std::string pct(double share) { return share < 0 ? "?" : fmt::format("{:.0f}%", 100.0 * share); }

// Rounds a figure for text: 32.0 -> "32", 3.92 -> "3.9".
std::string num(double v) {
  if (std::fabs(v - std::round(v)) < 0.05) return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f}", v);
}

bool within(double measured, double predicted, double tol) {
  if (predicted <= 0) return measured <= 0;
  return std::fabs(measured / predicted - 1.0) <= tol;
}

}  // namespace

void joinProfile(const Profile& p, std::vector<FileResult>& results, const JoinOptions& o) {
  // Index: profile lines by (file components, line).
  struct FileLines {
    std::vector<std::string> comps;
    std::map<unsigned, std::vector<LineRef>> lines;
  };
  std::map<std::string, FileLines> byFile;
  for (const auto& k : p.kernels)
    for (const auto& l : k.lines) {
      auto& f = byFile[l.file];
      if (f.comps.empty()) f.comps = components(l.file);
      f.lines[l.line].push_back({&k, &l});
    }
  // A linted file's profile file: the longest common path suffix (at least the file name).
  std::map<std::string, const FileLines*> match;
  auto profileFile = [&](const std::string& file) -> const FileLines* {
    auto it = match.find(file);
    if (it != match.end()) return it->second;
    std::error_code ec;
    auto comps = components(fs::weakly_canonical(fs::absolute(file, ec), ec).string());
    const FileLines* best = nullptr;
    size_t bestN = 0;
    for (const auto& [_, f] : byFile) {
      size_t n = commonSuffix(comps, f.comps);
      if (n > bestN) best = &f, bestN = n;
    }
    return match[file] = best;
  };
  auto refsAt = [&](const std::string& file, unsigned line, const std::string& function) {
    std::vector<LineRef> out;
    const FileLines* f = profileFile(file);
    if (!f) return out;
    auto it = f->lines.find(line);
    if (it == f->lines.end()) return out;
    out = it->second;
    // A finding in a kernel judges that kernel's instances only (a device function inlined into
    // several kernels keeps them all).
    std::string base = baseName(function);
    if (!base.empty() && std::any_of(out.begin(), out.end(), [&](const LineRef& r) { return r.kernel->name == base; }))
      std::erase_if(out, [&](const LineRef& r) { return r.kernel->name != base; });
    return out;
  };
  auto executedOf = [](const std::vector<LineRef>& refs) {
    double e = 0;
    for (const auto& r : refs) e += r.line->executed;
    return e;
  };
  // Share of the kernel's samples: the largest over the kernels the line is in.
  auto shareOf = [](const std::vector<LineRef>& refs, const LineRef** top = nullptr) {
    double best = -1;
    for (const auto& r : refs) {
      double s = r.kernel->samples > 0 ? r.line->samples / r.kernel->samples : 0;
      if (s > best) {
        best = s;
        if (top) *top = &r;
      }
    }
    return best;
  };

  std::set<std::tuple<const Line*, std::string>> covered;  // (line, kind) a finding speaks for
  for (auto& res : results) {
    for (auto& d : res.diags) {
      const std::string& rule = d.ruleId;
      auto refs = refsAt(d.span.begin.file, d.span.begin.line, d.function);
      if (!profileFile(d.span.begin.file)) continue;  // the file is not in the profile at all
      bool kernelRule = rule != "pageable-memcpy" && rule != "compile-error";
      if (!kernelRule) continue;
      Measurement m;
      if (refs.empty() || executedOf(refs) <= 0) {
        // A line with no instruction at all may be a declaration; say "not executed" only when
        // the kernel was profiled.
        m.verdict = "not executed in this run";
        m.text = "no instruction of this line ran in the profiled launches";
        d.measured = std::move(m);
        continue;
      }
      const LineRef* top = nullptr;
      m.stallShare = shareOf(refs, &top);
      m.kernel = top->kernel->name;
      m.values.push_back({"stallShare", m.stallShare});
      m.values.push_back({"stallSamples", top->line->samples});
      m.values.push_back({"kernelStallSamples", top->kernel->samples});
      m.values.push_back({"instructionsExecuted", executedOf(refs)});
      std::string where = fmt::format("this line: {} of {}'s stall samples", pct(m.stallShare), m.kernel);
      auto pr = [&](const char* key, double def = -1) {
        auto it = d.predicted.find(key);
        return it == d.predicted.end() ? def : it->second;
      };
      if (rule == "bank-conflict" && pr("ways") > 0) {
        auto mf = memFigures(refs, true, pr("store") > 0 ? 1 : 0);
        if (!mf.any) mf = memFigures(refs, true, -1);
        double ways = mf.ratio(), predicted = pr("ways");
        m.values.push_back({"predictedWays", predicted});
        m.values.push_back({"measuredWays", ways});
        m.values.push_back({"sharedWavefronts", mf.wavefronts});
        m.values.push_back({"sharedWavefrontsIdeal", mf.ideal});
        bool ok = within(ways, predicted, o.tolerance);
        m.verdict = ok ? "confirmed" : "differs";
        m.text = fmt::format("{}; {} shared wavefronts for {} ideal: {}-way measured, {}-way predicted{}", where,
                             num(mf.wavefronts), num(mf.ideal), num(ways), num(predicted),
                             ok ? "" : " (the counters average every execution of the line, e.g. every loop iteration; "
                                       "the finding names the worst case it found)");
        for (const auto& r : refs) covered.insert({r.line, "shared"});
      } else if (rule == "uncoalesced-access" && pr("sectors") > 0) {
        auto mf = memFigures(refs, false, pr("store") > 0 ? 1 : 0);
        if (!mf.any) mf = memFigures(refs, false, -1);
        double spr = mf.perRequest(), ideal = mf.idealPerRequest();
        double predicted = pr("sectors"), useful = pr("usefulSectors", 0);
        m.values.push_back({"predictedSectorsPerRequest", predicted});
        m.values.push_back({"predictedUsefulSectors", useful});
        m.values.push_back({"measuredSectorsPerRequest", spr});
        m.values.push_back({"measuredIdealSectorsPerRequest", ideal});
        m.values.push_back({"sectors", mf.wavefronts});
        m.values.push_back({"sectorsIdeal", mf.ideal});
        // A data-dependent access predicts "up to N": confirmed when the measured excess is real.
        bool ok = pr("random") > 0 ? mf.ratio() >= o.excessRatio : within(spr, predicted, o.tolerance);
        m.verdict = ok ? "confirmed" : "differs";
        m.text = fmt::format("{}; {} sectors per request measured ({} ideal), {}{} for {} predicted", where, num(spr),
                             num(ideal), pr("random") > 0 ? "up to " : "", num(predicted), num(useful));
        for (const auto& r : refs) covered.insert({r.line, "global"});
      } else if (rule == "divergent-branch" && pr("lanes") > 0) {
        // The fewest active lanes of an instruction in the branch statement's lines.
        unsigned first = static_cast<unsigned>(pr("firstLine", d.span.begin.line)),
                 last = static_cast<unsigned>(pr("lastLine", d.span.begin.line));
        double lanes = 32, executed = 0;
        for (unsigned ln = first; ln <= last && ln < first + 200; ++ln)
          for (const auto& r : refsAt(d.span.begin.file, ln, d.function)) {
            for (const auto& in : r.line->instructions)
              if (in.executed > 0 && in.predicatedOn > 0) {
                lanes = std::min(lanes, in.predicatedOn / in.executed);
                executed += in.executed;
              }
            covered.insert({r.line, "lanes"});
          }
        double predicted = pr("lanes");
        m.values.push_back({"predictedActiveLanes", predicted});
        m.values.push_back({"measuredActiveLanes", lanes});
        bool ok = within(lanes, predicted, o.tolerance) || std::fabs(lanes - predicted) <= 1.0;
        m.verdict = ok ? "confirmed" : "differs";
        m.text = fmt::format("{}; {} of 32 lanes active on average in the branch's least occupied instruction, {} "
                             "predicted{}",
                             where, num(lanes), num(predicted),
                             ok ? "" : " (the counters average every execution, e.g. every loop iteration)");
      } else {
        // Races and barriers: the counters show that the line ran, not whether it raced.
        m.verdict = "executed";
        m.text = where + "; hardware counters cannot confirm or rule out this kind of finding";
      }
      d.measured = std::move(m);
    }
  }

  // Measured-only findings: lines whose counters show a problem no finding covers.
  std::map<std::string, FileResult*> resultOf;
  for (auto& r : results) {
    std::error_code ec;
    resultOf[fs::weakly_canonical(fs::absolute(r.file, ec), ec).string()] = &r;
  }
  auto linted = [&](const std::string& profiled) -> std::pair<FileResult*, std::string> {
    auto comps = components(profiled);
    FileResult* best = nullptr;
    std::string bestFile;
    size_t bestN = 0;
    for (auto& r : results) {
      std::set<std::string> files = {r.file};
      for (const auto& d : r.diags) files.insert(d.span.begin.file);
      for (const auto& f : files) {
        std::error_code ec;
        size_t n = commonSuffix(comps, components(fs::weakly_canonical(fs::absolute(f, ec), ec).string()));
        if (n > bestN) best = &r, bestN = n, bestFile = f;
      }
    }
    return {best, bestFile};
  };
  for (const auto& k : p.kernels) {
    for (const auto& l : k.lines) {
      double share = k.samples > 0 ? l.samples / k.samples : 0;
      auto [res, file] = linted(l.file);
      if (!res) continue;  // a line of a file that was not linted (toolkit headers)
      std::vector<LineRef> refs = {{&k, &l}};
      // The line as it is here (ncu's copy of the source has its indentation stripped).
      std::string text = l.source;
      {
        std::ifstream in(file);
        std::string s;
        for (unsigned n = 1; std::getline(in, s); ++n)
          if (n == l.line) {
            text = s;
            break;
          }
      }
      unsigned col = 1;
      while (col <= text.size() && std::isspace(static_cast<unsigned char>(text[col - 1]))) ++col;
      auto make = [&](const char* id, std::string msg, std::string fix, Severity sev) {
        Diagnostic d;
        d.ruleId = id;
        d.severity = sev;
        d.span.begin = {file, l.line, col};
        d.span.endLine = l.line;
        d.span.endCol = static_cast<unsigned>(std::max<size_t>(col, text.size()));
        d.message = std::move(msg);
        d.fixHint = std::move(fix);
        d.function = k.name;
        Measurement m;
        m.verdict = "measured only";
        m.kernel = k.name;
        m.stallShare = share;
        m.values.push_back({"stallShare", share});
        m.values.push_back({"stallSamples", l.samples});
        m.values.push_back({"kernelStallSamples", k.samples});
        m.values.push_back({"instructionsExecuted", l.executed});
        m.text = fmt::format("this line: {} of {}'s stall samples", pct(share), k.name);
        d.measured = std::move(m);
        return d;
      };
      if (share < o.minShare) continue;
      // Loads and stores judged apart; the worse one speaks for the line.
      auto worst = [&](bool shared) {
        auto ld = memFigures(refs, shared, 0), stf = memFigures(refs, shared, 1);
        return (stf.any && stf.ideal > 0 && (!ld.any || ld.ideal <= 0 || stf.ratio() > ld.ratio())) ? stf : ld;
      };
      auto sh = worst(true);
      if (sh.any && sh.ideal > 0 && sh.ratio() >= o.excessRatio && !covered.count({&l, "shared"})) {
        Diagnostic d = make("measured-bank-conflict",
                            fmt::format("measured: shared-memory accesses on this line need {} wavefronts for {} ideal "
                                        "({}x, an average {}-way bank conflict) in '{}'; the static analysis did not "
                                        "predict it (the addresses depend on data or on values it could not follow)",
                                        num(sh.wavefronts), num(sh.ideal), num(sh.ratio()), num(sh.ratio()), k.name),
                            "make the lanes of a warp access consecutive 4-byte words, or pad/permute the shared "
                            "array so that their addresses spread over all 32 banks",
                            Severity::Warning);
        d.measured->values.push_back({"measuredWays", sh.ratio()});
        d.measured->values.push_back({"sharedWavefronts", sh.wavefronts});
        d.measured->values.push_back({"sharedWavefrontsIdeal", sh.ideal});
        d.measured->text += fmt::format("; {}-way measured", num(sh.ratio()));
        res->diags.push_back(std::move(d));
      }
      auto gl = worst(false);
      if (gl.any && gl.ideal > 0 && gl.ratio() >= o.excessRatio && !covered.count({&l, "global"})) {
        Diagnostic d = make("measured-uncoalesced",
                            fmt::format("measured: global accesses on this line touch {} sectors per request for {} "
                                        "ideal ({}x the necessary traffic) in '{}'; the static analysis did not "
                                        "predict it (the addresses depend on data or on values it could not follow)",
                                        num(gl.perRequest()), num(gl.idealPerRequest()), num(gl.ratio()), k.name),
                            "let consecutive lanes access consecutive addresses (structure of arrays, swapped index "
                            "roles), or stage the data through shared memory",
                            Severity::Warning);
        d.measured->values.push_back({"measuredSectorsPerRequest", gl.perRequest()});
        d.measured->values.push_back({"measuredIdealSectorsPerRequest", gl.idealPerRequest()});
        d.measured->text += fmt::format("; {} sectors per request ({} ideal)", num(gl.perRequest()), num(gl.idealPerRequest()));
        res->diags.push_back(std::move(d));
      }
      // Active lanes: threads executing the line's instructions per warp-level instruction. Lanes
      // switched off by a predicate are not counted as idle here: a predicated `if (tid < s)` whose
      // warps are all on or all off is not divergence.
      double lanes = l.executed > 0 ? l.avgThreads() : 32;
      if (l.executed > 0 && share >= o.hotShare && lanes < o.minLanes && !covered.count({&l, "lanes"})) {
        Diagnostic d = make("measured-divergence",
                            fmt::format("measured: only {} of 32 lanes are active on average on this hot line of '{}' "
                                        "({} of its stall samples); the static analysis did not predict it (the "
                                        "branch depends on data or on values it could not follow)",
                                        num(lanes), k.name, pct(share)),
                            "group the work so that whole warps take the same path (sort or bin the data by the "
                            "condition, or assign work per warp)",
                            Severity::Warning);
        d.measured->values.push_back({"measuredActiveLanes", lanes});
        d.measured->text += fmt::format("; {} of 32 lanes active", num(lanes));
        res->diags.push_back(std::move(d));
      }
    }
  }

  // Rank: by the line's share of its kernel's stall samples, measured before not executed.
  auto key = [](const Diagnostic& d) { return d.measured ? d.measured->stallShare : -2.0; };
  for (auto& r : results)
    std::stable_sort(r.diags.begin(), r.diags.end(), [&](const Diagnostic& a, const Diagnostic& b) { return key(a) > key(b); });
  std::stable_sort(results.begin(), results.end(), [&](const FileResult& a, const FileResult& b) {
    double ka = a.diags.empty() ? -3 : key(a.diags.front()), kb = b.diags.empty() ? -3 : key(b.diags.front());
    return ka > kb;
  });
}

// ---------------------------------------------------------------------------------------------
// Measuring

int runProcess(const std::vector<std::string>& argv, const std::string& cwd, const std::string& logFile) {
  if (argv.empty()) return 127;
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    int fd = open(logFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

std::string findNcu(const std::string& cudaPath) {
  auto exe = [](const fs::path& p) { return access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); };
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && exe(fs::path(dir) / "ncu")) return (fs::path(dir) / "ncu").string();
  }
  std::vector<fs::path> dirs;
  if (!cudaPath.empty()) dirs.push_back(fs::path(cudaPath) / "bin");
  if (const char* c = std::getenv("CUDA_PATH")) dirs.push_back(fs::path(c) / "bin");
  dirs.push_back("/usr/local/cuda/bin");
  std::error_code ec;
  if (fs::is_directory("/opt/nvidia/nsight-compute", ec)) {
    std::vector<fs::path> versions;
    for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec)) versions.push_back(e.path());
    std::sort(versions.rbegin(), versions.rend());  // newest first
    dirs.insert(dirs.end(), versions.begin(), versions.end());
  }
  for (const auto& d : dirs)
    if (exe(d / "ncu")) return (d / "ncu").string();
  return {};
}

bool gpuVisible(std::string& why) {
  if (const char* s = std::getenv("GPUOPT_LINT_SKIP_GPU_CHECK"); s && std::string(s) == "1") return true;
  std::error_code ec;
  if (fs::exists("/dev/nvidiactl", ec) && fs::exists("/dev/nvidia0", ec)) return true;
  why = "no NVIDIA GPU is visible on this machine (no /dev/nvidia0 and /dev/nvidiactl: no device, or no driver "
        "loaded); profile on a machine with a GPU, or record the profile there and join it here with --import DIR";
  return false;
}

int classifyNcuRun(const std::string& output, int exitStatus, const std::string& command, std::string& error) {
  auto has = [&](const char* s) { return output.find(s) != std::string::npos; };
  if (has("ERR_NVGPUCTRPERM")) {
    error = "Nsight Compute may not read the GPU's performance counters as this user (ERR_NVGPUCTRPERM): run as "
            "root, or allow it for all users (options nvidia NVreg_RestrictProfilingToAdminUsers=0 in "
            "/etc/modprobe.d, then reload the driver); see https://developer.nvidia.com/ERR_NVGPUCTRPERM";
    return kNoPermission;
  }
  if (has("does not exist or is not an executable") || exitStatus == 127) {
    error = "cannot run '" + command + "': it does not exist or is not executable (give a path, e.g. ./app)";
    return kCommandNotFound;
  }
  if (has("No CUDA-capable device") || has("no CUDA-capable device") || has("No supported GPU") ||
      has("no supported device") || has("ERR_NVGPU_NOT_FOUND")) {
    error = "ncu found no GPU it can profile: " + command + " ran without a usable NVIDIA device";
    return kNoGpu;
  }
  if (has("The application returned an error code") || (exitStatus != 0 && !has("==ERROR==")))
  {
    size_t pos = output.find("The application returned an error code");
    std::string code = pos == std::string::npos ? std::to_string(exitStatus) : output.substr(pos + 39, 8);
    code.erase(std::remove_if(code.begin(), code.end(), [](char c) { return !std::isdigit(static_cast<unsigned char>(c)); }),
               code.end());
    error = "'" + command + "' failed (exit status " + (code.empty() ? std::to_string(exitStatus) : code) +
            "); its output is in the log above. Profile a run that succeeds";
    return kCommandFailed;
  }
  if (has("No kernels were profiled")) {
    error = "'" + command + "' launched no kernel that ncu profiled" +
            (has("Available Kernels") ? " (none matched the kernel filter; the kernels it launched are listed above)"
                                      : " (does it launch any? check that it finds a GPU and its input)");
    return kNoKernels;
  }
  if (exitStatus != 0) {
    error = "ncu failed (exit status " + std::to_string(exitStatus) + ")";
    return kCommandFailed;
  }
  return 0;
}

namespace {
std::string quoteForLog(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + (a.find(' ') == std::string::npos ? a : "'" + a + "'");
  return s;
}

int exportPages(const std::string& ncu, const std::string& report, const std::string& outDir, std::string& error) {
  struct Page {
    const char* file;
    std::vector<std::string> args;
  };
  for (const Page& pg : {Page{"source.csv", {"--page", "source", "--csv", "--print-source", "cuda,sass"}},
                         Page{"raw.csv", {"--page", "raw", "--csv"}}}) {
    std::vector<std::string> argv = {ncu, "-i", report};
    argv.insert(argv.end(), pg.args.begin(), pg.args.end());
    std::string out = (fs::path(outDir) / pg.file).string();
    int rc = runProcess(argv, "", out);
    if (rc != 0) {
      error = "exporting " + std::string(pg.file) + " failed: " + quoteForLog(argv) + " (exit status " + std::to_string(rc) + ")";
      return 2;
    }
  }
  return 0;
}
}  // namespace

int runNcu(const RunOptions& o, std::string& error) {
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  std::string report = (fs::path(o.outDir) / "profile").string();
  std::vector<std::string> argv = {o.ncu, "--section", "SourceCounters", "--section", "LaunchStats", "--section",
                                   "SpeedOfLight", "--import-source", "yes", "-f", "-o", report,
                                   "-c", std::to_string(o.launchCount)};
  if (!o.kernelFilter.empty()) argv.insert(argv.end(), {"-k", o.kernelFilter});
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  std::string log = (fs::path(o.outDir) / "ncu.log").string();
  int rc = runProcess(argv, o.cwd, log);
  bool ok = false;
  std::string output = readFile(log, ok);
  if (o.verbose) fmt::print(stderr, "gpuopt-lint: {}\n{}", quoteForLog(argv), output);
  int status = classifyNcuRun(output, rc, o.command.empty() ? "" : o.command[0], error);
  if (status == kCommandFailed || status == kNoKernels || status == kNoPermission) {
    // Show the program's own output: it says why.
    std::string tail = output.size() > 3000 ? output.substr(output.size() - 3000) : output;
    error = tail + (tail.empty() || tail.back() == '\n' ? "" : "\n") + "gpuopt-lint: error: " + error;
  }
  if (status != 0) return status;
  if (!fs::exists(report + ".ncu-rep", ec)) {
    error = "ncu wrote no report (" + report + ".ncu-rep); its output:\n" + output;
    return 2;
  }
  int e = exportPages(o.ncu, report + ".ncu-rep", o.outDir, error);
  if (e) return e;
  if (output.find("No source files were imported") != std::string::npos) {
    // Keep going: the import says it precisely (no lineinfo).
  }
  return 0;
}

int measureKernelTimes(const RunOptions& o, unsigned runs, std::map<std::string, std::vector<double>>& usPerKernel,
                       std::string& error) {
  std::error_code ec;
  fs::create_directories(o.outDir, ec);
  for (unsigned i = 0; i < runs; ++i) {
    std::string report = (fs::path(o.outDir) / ("times-" + std::to_string(i))).string();
    std::vector<std::string> argv = {o.ncu, "--metrics", "gpu__time_duration.sum", "-f", "-o", report,
                                     "-c", std::to_string(o.launchCount)};
    if (!o.kernelFilter.empty()) argv.insert(argv.end(), {"-k", o.kernelFilter});
    argv.insert(argv.end(), o.command.begin(), o.command.end());
    std::string log = report + ".log";
    int rc = runProcess(argv, o.cwd, log);
    bool ok = false;
    int status = classifyNcuRun(readFile(log, ok), rc, o.command.empty() ? "" : o.command[0], error);
    if (status) return status;
    std::string csv = report + ".csv";
    if (runProcess({o.ncu, "-i", report + ".ncu-rep", "--page", "raw", "--csv"}, "", csv) != 0) {
      error = "could not export the timing report " + report + ".ncu-rep";
      return 2;
    }
    Profile p;
    std::string err;
    if (!importRawCsv(readFile(csv, ok), p, err)) {
      error = csv + ": " + err;
      return 2;
    }
    for (const auto& k : p.kernels)
      if (k.durationUs >= 0) usPerKernel[k.name].push_back(k.durationUs);
  }
  return 0;
}

}  // namespace gpuopt::profile
