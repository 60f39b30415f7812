#include "collectives/ce_issuer.hpp"

namespace gpupeer {

CeIssuer ceIssuerFor(int ranks) { return ranks == 2 ? CeIssuer::kReceiver : CeIssuer::kSender; }

}  // namespace gpupeer
