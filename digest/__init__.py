"""The daily email digest: content from the warehouse, HTML and text mail with a chart, sent once per day."""
