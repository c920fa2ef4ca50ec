ALTER TABLE "study_topics" ADD COLUMN "request_id" uuid;--> statement-breakpoint
ALTER TABLE "study_topics" ADD CONSTRAINT "study_topics_request_unique" UNIQUE("project_id","request_id");