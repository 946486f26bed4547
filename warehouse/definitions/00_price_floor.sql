-- The plans' price floor: an offer priced far below the rest of the market for its GPU that day is
-- a placeholder or a unit slip, not a deal. It stays in `offers` (history), but no plan, price move
-- or chart uses it (judged_offers' below_price_floor, 40_judged_offers.sql, applies these numbers).
-- One of the price-plausibility rules listed in docs/plausibility.md.
-- Calibrated on the real history (price_history/ observations: 159 days, 43 platforms, RunPod's
-- out-of-stock placeholder of 0.5 USD per GPU-hour for MI300X and H200): against the median of the
-- other platforms' cheapest price for the GPU, RunPod's placeholder sits at 0.14-0.18 of it, the
-- cheapest real marketplace offers at 0.21 and up (vast A100 80GB 0.43-0.47 against 2.06): one GPU's
-- real prices differ 2-3x, never 5x.
CREATE OR REPLACE MACRO price_floor_share() AS CAST(0.2 AS DOUBLE);
-- Where too few other platforms sell the GPU: against the median of the platform's own other offers
-- of it. A platform's tiers and regions of one GPU differ by up to 2x (RunPod community vs secure),
-- and RunPod's 0.5 MI300X stood beside its own 1.99 (0.25) on the 19 days it was the only seller.
CREATE OR REPLACE MACRO own_price_floor_share() AS CAST(1 / 3 AS DOUBLE);
-- Other platforms that must price the GPU that day for the first rule: with one or two, a single
-- odd platform would decide the median; with three, it cannot.
CREATE OR REPLACE MACRO price_floor_min_other_platforms() AS 3;

-- Why an offer is under the price floor, in words (judged_offers' price_reference, floor_share and
-- reference_offers): the offers check and plan_excluded_offers say it alike.
CREATE OR REPLACE MACRO price_floor_reason(price_reference, floor_share, reference_offers) AS
    CASE price_reference
        WHEN 'other_platforms' THEN printf(
            'under %.0f%% of the median of %d other platforms: a placeholder? left out of plans',
            100 * floor_share, reference_offers
        )
        ELSE printf(
            'under %.0f%% of the median of the platform''s %d other offers of this GPU: a placeholder? '
            'left out of plans',
            100 * floor_share, reference_offers
        )
    END;
