#pragma once
/// \file kb.hpp
/// The whole knowledge base API in one include: entries and loading (knowledge_base.hpp),
/// matching logs (kb_matcher.hpp) and rendering matches (kb_render.hpp).

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/kb_render.hpp"
#include "gpupeer/knowledge_base.hpp"
