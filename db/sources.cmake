set(TBTUNE_DB_SOURCES
  db/cache.cpp
  db/rows.cpp
  db/schema.cpp
  db/sqlite.cpp
)
