#pragma once
// The enums that cross the C boundary as ints: c_api.h's constants, checked on the way in.

#include "gpupeer/c_api.h"
#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer::capi {

/// The enums of c_api.h, checked: kInvalidArgument naming the argument when out of range.
Result<CollOp> collOpFromC(int op);
Result<DataType> dataTypeFromC(int type);
Result<RedOp> redOpFromC(int op);

}  // namespace gpupeer::capi
