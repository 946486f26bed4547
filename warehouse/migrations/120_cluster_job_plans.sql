-- A job plan may join several whole nodes of one offer where its platform sells a training fabric
-- (sizing/data/clusters.csv). The stored plan says over what, as `gpuplan plans --json` does:
--   fabric                  the fabric in a few characters (`EFA 400`, `IB 400`); NULL: one node, or
--                           a unit the platform sells whole
--   internode_gbps_per_gpu  the fabric's Gb/s per GPU, one direction, the plan was sized at
--   goodput                 the share of wall time that trains on its GPUs (sizing/fabric.py; 1 on
--                           one node): its train_days include the time lost to interruptions
--   nodes_stock             'shown' (the platform's stock covers the nodes) or 'unknown'; NULL off a cluster
ALTER TABLE job_plans ADD COLUMN fabric VARCHAR;
ALTER TABLE job_plans ADD COLUMN internode_gbps_per_gpu DOUBLE;
ALTER TABLE job_plans ADD COLUMN goodput DOUBLE;
ALTER TABLE job_plans ADD COLUMN nodes_stock VARCHAR;
