#pragma once
// Whose copy engines carry a copy between two ranks in the copy-engine algorithm's all-gather,
// alltoall, send/recv and broadcast: the sender's (pushing) or the receiver's (pulling). The
// reductions' copies are always pushed into the receiver's scratch. Pure.

namespace gpupeer {

enum class CeIssuer { kSender, kReceiver };

/// By default: the receivers' on 2 GPUs, the senders' from 3, each the faster there
/// (docs/collectives.md, tuned constants).
CeIssuer ceIssuerFor(int ranks);

}  // namespace gpupeer
