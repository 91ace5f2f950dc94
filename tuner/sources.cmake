set(TBTUNE_TUNER_SOURCES
  tuner/expr.cpp
  tuner/spec.cpp
  tuner/stencil.cpp
  tuner/reference.cpp
)
