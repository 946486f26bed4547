-- What a reader of a plan needs beyond 010: how big the model is (to sort 7B before 13B), whether the
-- offer can be rented by the hour at all, the least one pays for a month of training, and the shape.
ALTER TABLE cheapest_plans ADD COLUMN params DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN unit_gpu_count INTEGER;     -- GPUs in one rentable unit of the offer
ALTER TABLE cheapest_plans ADD COLUMN multi_node BOOLEAN;
ALTER TABLE cheapest_plans ADD COLUMN hourly_rentable BOOLEAN;    -- FALSE: day/week/month plans only
ALTER TABLE cheapest_plans ADD COLUMN commitment_hours INTEGER;   -- a month (730 h) or the longer minimum term
ALTER TABLE cheapest_plans ADD COLUMN commitment_usd DOUBLE;      -- rent over commitment_hours
ALTER TABLE cheapest_plans ADD COLUMN commitment_cny DOUBLE;
