"""Post-processing of wormhole runs (the package behind scripts/wh_analyze.py).

Modules
  common   AnalysisError (bad input: exit status 2), nearest-rank percentiles, the HPCC node-IP encoding
  load     readers: results.h5 (/flows, /pfc, /run, /workload, /wormhole), HPCC fct.txt and pfc.txt
  summary  the run summary (text or JSON)
  compare  per-flow join of two runs and their FCT / iteration-time errors
  plots    PNG figures: FCT slowdown, per-layer exposed communication, PFC pauses, compare scatter
  tables   scaling and θ × l sweep tables (CSV, JSON, bench_wormhole.py Markdown) and their plots

Units follow the results file: times in the HDF5 /flows and /pfc tables are integer ns, /workload times
integer ps; everything printed is in µs unless the label says otherwise.
"""
