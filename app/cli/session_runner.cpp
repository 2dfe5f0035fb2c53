#include "session_runner.h"

#include <cmath>
#include <cstdio>

#include "cli_common.h"
#include "common/error.h"
#include "io/host_memory.h"
#include "policy/policy_summary.h"
#include "reports/exporter.h"
#include "session/metric_sums.h"

namespace kvscope::cli {

std::unique_ptr<Session> make_flag_session(std::shared_ptr<const ModelBundle> bundle, SessionConfig cfg) {
  try {
    return std::make_unique<Session>(std::move(bundle), std::move(cfg));
  } catch (const Error& e) {
    throw for_command_line(e);
  }
}

void note_recording(const Session& s, const std::string& budget_name) {
  const MemoryForecast& f = s.memory_forecast();
  // Small runs stay quiet; at 7-8B scale the recorder is the run's biggest
  // allocation and the user sees it before the first step.
  if (double(f.total()) >= kNoteRecordingBytes) std::fprintf(stderr, "kvscope-cli: memory: %s\n", f.summary().c_str());
  if (!s.config().recording.layers.empty()) return;  // chosen explicitly
  const auto& rec = s.recorder().attention_layers();
  const int L = s.model_config().n_layers;
  if (static_cast<int>(rec.size()) >= L) return;
  std::string list;
  for (int l : rec) list += (list.empty() ? "" : ", ") + std::to_string(l);
  char mb[64];
  std::snprintf(mb, sizeof(mb), "%g MB", s.config().recording.memory_mb);
  const bool machine_limited = f.layers_limited_by_machine;
  if (rec.empty())
    std::fprintf(stderr,
                 "kvscope-cli: note: no layer's attention fits beside the masks, scores and KV caches (%s); every "
                 "layer is replayed on demand\n",
                 f.summary().c_str());
  else
    std::fprintf(stderr,
                 "kvscope-cli: note: %s (%s) holds the attention of layer%s %s of %d; the other layers are "
                 "replayed on demand\n",
                 machine_limited ? "the memory available" : budget_name.c_str(),
                 machine_limited ? format_bytes(f.available).c_str() : mb, rec.size() == 1 ? "" : "s", list.c_str(), L);
}

namespace {

void run_and_export(Session& s, bool print_text, OutputFolder* export_to) {
  const auto& tok = *s.bundle().tokenizer;
  if (print_text) {
    std::fputs(tok.decode(s.tokens(), true).c_str(), stdout);
    std::fflush(stdout);
  }
  check_interrupt();
  s.prefill();
  test_pause_point("computing", "");
  std::size_t printed = 0;
  auto flush_text = [&](bool final) {
    if (!print_text) return;
    std::vector<int> gen = s.generated();
    if (!gen.empty() && s.bundle().is_eos(gen.back())) gen.pop_back();
    const std::string text = tok.decode(gen, true);
    // Hold back a trailing half character until its other bytes arrive.
    if (!final && text.size() >= 3 && text.compare(text.size() - 3, 3, "\xEF\xBF\xBD") == 0) return;
    if (text.size() > printed) {
      std::fwrite(text.data() + printed, 1, text.size() - printed, stdout);
      std::fflush(stdout);
      printed = text.size();
    }
  };
  while (!interrupt_requested() && s.step()) flush_text(false);
  check_interrupt();
  flush_text(true);
  if (print_text) {
    std::printf("\n");
    std::fflush(stdout);  // the summary goes to stderr: keep it after the text when both are piped
  }
  std::fprintf(stderr, "%s\n", session_summary(s).c_str());
  if (export_to) export_run(s, *export_to);
}

}  // namespace

void export_run(const Session& s, OutputFolder& to, const Session* fork) {
  const auto files = export_session(s, to, {}, nullptr, fork);  // Ctrl-C: Interrupted saying nothing was written
  std::fprintf(stderr, "exported %zu files to %s\n", files.size(), to.given().c_str());
}

void run_session(Session& s, bool print_text, OutputFolder* export_to) {
  try {
    run_and_export(s, print_text, export_to);
  } catch (const Interrupted&) {
    if (print_text) std::printf("\n");
    std::fflush(stdout);
    throw Interrupted(export_to ? export_to->nothing_written() : "stopped");
  }
}

std::string session_summary(const Session& s) {
  const auto& ms = s.recorder().metrics();
  const auto& r = s.policy().resolved();
  char buf[512];
  const auto& last = ms.back();
  int evicted = static_cast<int>(s.recorder().events().size());
  std::snprintf(buf, sizeof(buf),
                "[%s] %s | prompt %d + %d new tokens | KV %.1f KiB of %.1f KiB (%.0f%%) | %d evictions",
                s.backend().name().c_str(), policy_summary(r).c_str(), s.prompt_length(),
                static_cast<int>(s.generated().size()), last.kv_bytes / 1024.0, last.kv_bytes_full / 1024.0,
                100.0 * last.kv_bytes / std::max<int64_t>(1, last.kv_bytes_full), evicted);
  std::string out = buf;
  const MetricSums t = sum_metrics(ms);  // the sums behind sweep's means too (step 0 left out)
  if (const int n = t.n) {
    std::snprintf(buf, sizeof(buf),
                  " | over %d decode step%s: mean KL %.4f, top-1 agreement %.1f%%, attention recall %.3f, ideal "
                  "similarity %.3f",
                  n, n == 1 ? "" : "s", t.kl / n, 100 * t.top1_agree / n, t.attention_recall / n,
                  t.ideal_similarity / n);
    out += buf;
    // Under a sharing conversion the above is eviction alone (against the
    // converted model's full cache); this is conversion and eviction
    // together, against the checkpoint as it was trained.
    if (s.config().sharing.kind != SharingLayout::Kind::Native) {
      std::snprintf(buf, sizeof(buf), " | vs the native model: mean KL %.4f, top-1 agreement %.1f%%", t.kl_native / n,
                    100 * t.top1_agree_native / n);
      out += buf;
    }
  }
  return out;
}

}  // namespace kvscope::cli
