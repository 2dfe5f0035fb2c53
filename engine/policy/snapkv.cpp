// snapkv (SnapKV, Li et al. 2024): the prompt's last w queries (the
// observation window, which is also the protected recent window) score the
// keys before them, S[j] = sum over those queries of A[q][j], combined over
// the query heads that read the KV head; a slot ranks by the mean of S over
// the `kernel` slots centred on it (average pooling, zero beyond the
// competing slots, as kvpress's SnapKVPress pools with padding kernel/2),
// divided by w: the window queries' mean attention, kvpress's scale.
// While decoding, each new query's attention is added to S, as H2O does:
// SnapKV itself compresses only the prompt. With a window of 0 every prompt
// query scores.
#include "policy/snapkv.h"

#include <string>

#include "common/error.h"

namespace kvscope {

void check_snapkv_kernel(const PolicyParams& p) {
  const long kernel = static_cast<long>(p.number("kernel"));
  if (kernel % 2 == 0)
    throw Error::setting("policy.kernel",
                         "must be odd (the pooling window is centred on each slot), got " + std::to_string(kernel));
}

std::unique_ptr<Policy> make_snapkv_policy(const ResolvedPolicy& r) {
  check_snapkv_kernel(r.params);
  return std::make_unique<SnapKvPolicy>(r);
}

}  // namespace kvscope
