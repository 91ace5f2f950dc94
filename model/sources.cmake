set(TBTUNE_MODEL_SOURCES
  model/device_profile.cpp
  model/model.cpp
  model/derived.cpp
  model/profile_json.cpp
)
