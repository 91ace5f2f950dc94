set(TBTUNE_DB_SOURCES
  db/cache.cpp
  db/compiles.cpp
  db/merge.cpp
  db/rows.cpp
  db/schema.cpp
  db/sqlite.cpp
)
