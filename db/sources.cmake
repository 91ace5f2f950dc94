set(TBTUNE_DB_SOURCES
  db/cache.cpp
)
