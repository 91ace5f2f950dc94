set(TBTUNE_CLI_SOURCES
  cli/main.cpp
)
