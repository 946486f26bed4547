-- The daily tables may plan several whole nodes of one offer where its platform sells a training
-- fabric (sizing/data/clusters.csv), as job plans do (migration 120). Such a requirement is sized at
-- the fabric's bandwidth, so a day may hold two rows of one (model, method, GPU model, GPU count):
-- one on one machine (or a unit sold whole) and one per fabric the day's clusters run over.
--   internode_gbps_per_gpu  the fabric's Gb/s per GPU the row was sized at; NULL: no fabric
--   goodput                 the share of wall time that trains on its GPUs (sizing/fabric.py); 1 off a cluster
ALTER TABLE plan_requirements ADD COLUMN internode_gbps_per_gpu DOUBLE;
ALTER TABLE plan_requirements ADD COLUMN goodput DOUBLE DEFAULT 1;
