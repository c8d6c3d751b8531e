// How far each rank got in each of its process groups, as its own
// flight-recorder dump says: one `fr.rank_progress` evidence per (rank,
// process group) with the highest collective sequence number it enqueued,
// started and completed. The rank x sequence picture of `ccdiag analyze`
// reads these; without them a rank whose dump is present would look like a
// rank nobody reported.
#pragma once

#include <vector>

#include "ccdiag/evidence.hpp"
#include "ccdiag/fr_dump.hpp"

namespace ccdiag::fr {

std::vector<Evidence> rank_progress(const RankDump& dump);

}  // namespace ccdiag::fr
