#pragma once
// Whose copy engines carry a copy between two ranks in the copy-engine algorithm's all-gather,
// alltoall, send/recv and broadcast: the sender's (pushing) or the receiver's (pulling). The
// reductions' copies are always pushed into the receiver's scratch. Pure.

namespace gpupeer {

enum class CeIssuer { kSender, kReceiver };

/// By default: the receivers' on 2 GPUs, the senders' from 3. In CUDA graphs on 2x H200
/// (176d235:bench/results/2026-11-22-h200x2-s13, run 1, two passes), pulling took all-gather and alltoall
/// of 16 MiB-512 MiB 1.0-3.0 us less than pushing (128 MiB: 185.3-185.6 against 187.2-188.3 us),
/// send/recv and broadcast the same within 1 us; on 4x H200 (-h200x4-s13, run 2) far slower
/// (all-gather of 128 MiB 502.0 against 296.6 us, alltoall 488.2 against 297.4). GPU0's engines
/// carrying both directions of 2 GPUs was slower than either (send/recv of 128 MiB 364.3-364.7
/// against 360.3-360.4, all-reduce 417.4-418.4 against 401.4-401.9; run 1, not kept).
CeIssuer ceIssuerFor(int ranks);

}  // namespace gpupeer
