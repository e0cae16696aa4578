#include "analyzer/report/diagnostic.h"
#include "analyzer/report/output.h"

namespace gpuopt {

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "warning";
}

bool parseSeverity(std::string_view t, Severity& out) {
  if (t == "note" || t == "info") out = Severity::Note;
  else if (t == "warning") out = Severity::Warning;
  else if (t == "error") out = Severity::Error;
  else return false;
  return true;
}

bool parseOutputFormat(std::string_view s, OutputFormat& out) {
  if (s == "text") out = OutputFormat::Text;
  else if (s == "json") out = OutputFormat::Json;
  else if (s == "sarif") out = OutputFormat::Sarif;
  else if (s == "github") out = OutputFormat::Github;
  else return false;
  return true;
}

}  // namespace gpuopt
