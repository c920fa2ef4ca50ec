CREATE TABLE "tool_counters" (
	"project_id" uuid NOT NULL,
	"tool" text NOT NULL,
	"name" text NOT NULL,
	"outcome" text DEFAULT '' NOT NULL,
	"code" text DEFAULT '' NOT NULL,
	"le" double precision DEFAULT 0 NOT NULL,
	"value" double precision NOT NULL,
	CONSTRAINT "tool_counters_pk" PRIMARY KEY("project_id","tool","name","outcome","code","le")
);
--> statement-breakpoint
ALTER TABLE "tool_counters" ADD CONSTRAINT "tool_counters_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;