-- A daily plan may join several whole nodes of one offer where its platform sells a training fabric
-- (migration 121). Its candidate and its stored best plan say over what, as a job plan does
-- (migration 120):
--   fabric                  the fabric in a few characters (`EFA 400`, `IB 400`); NULL: one node, or
--                           a unit the platform sells whole
--   internode_gbps_per_gpu  the fabric's Gb/s per GPU, one direction, the plan was sized at
--   goodput                 the share of wall time that trains on its GPUs (sizing/fabric.py; 1 off a
--                           cluster): its train_days and total include the time lost to interruptions
-- Rows planned before keep NULL (nothing was joined).
ALTER TABLE plan_candidates ADD COLUMN fabric VARCHAR;
ALTER TABLE plan_candidates ADD COLUMN internode_gbps_per_gpu DOUBLE;
ALTER TABLE plan_candidates ADD COLUMN goodput DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN fabric VARCHAR;
ALTER TABLE cheapest_plans ADD COLUMN internode_gbps_per_gpu DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN goodput DOUBLE;
