// Which head to show when nobody chose one: the query head whose attention
// over this run is most informative — most concentrated on a few content
// tokens. Layer 0 (the old default) is usually the least telling: its heads
// spread evenly or look at the first token and the current one.
//
// The rule, per recorded layer and query head, over every recorded step:
// take the step's attention row, set aside what goes to position 0 (the
// attention sink) and to the 4 most recent positions (the query and the 3
// before it: previous-token and local heads look there, and a policy's
// recent window keeps them anyway), and measure how
// concentrated the rest is: 1 - H / log(m), with H the entropy of the rest
// renormalised and m the number of cached positions it spreads over (1:
// all of it on one token, 0: uniform). Weight that by the share of
// attention the rest holds, so a head that only looks at the sink or at
// its neighbours scores near 0: the winner is a head that reads distant
// content tokens, the attention that eviction takes away. The head's score is the mean over the steps; the
// highest wins, ties to the lowest layer and head. Layers whose attention
// the recorder does not hold are not considered (no replay); with none
// recorded the choice is layer 0, head 0.
//
// The desktop app opens on the same head; the exporter draws it when the
// session sets no export layer and head.
#pragma once

#include <string>

namespace kvscope {

class Session;

struct HeadChoice {
  int layer = 0;
  int head = 0;      // a query head
  double score = 0;  // the rule's value for it, in [0, 1]
};

HeadChoice informative_head(const Session& s);
// Score of one recorded (layer, head) by the rule above; NaN when the
// layer is not recorded.
double head_informativeness(const Session& s, int layer, int head);

}  // namespace kvscope
