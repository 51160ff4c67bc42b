/** Inputs of the mutations, with their validation (each error names `input.<field>`). */
import "reflect-metadata";
import { Field, InputType, Int } from "type-graphql";
import { MasterSourceKind } from "../source/source.type";

@InputType()
export class AddServerInput {
  @Field(() => String, {
    description: "IP address (host names are not accepted: they are never resolved).",
  })
  address!: string;

  @Field(() => Int, { description: "The query port." })
  port!: number;

  @Field(() => String, {
    defaultValue: "source",
    description: "Query protocol: 'source', 'quake3', ...",
  })
  protocol!: string;

  @Field(() => Int, { nullable: true })
  gamePort?: number | null;
}

@InputType()
export class AddSourceInput {
  @Field(() => String, { description: "Slug: lower-case letters, digits and dashes." })
  name!: string;

  @Field(() => MasterSourceKind)
  kind!: MasterSourceKind;

  @Field(() => String)
  host!: string;

  @Field(() => Int, { nullable: true })
  port?: number | null;

  @Field(() => String, { nullable: true })
  filter?: string | null;

  @Field(() => [Int], { nullable: true })
  regions?: number[] | null;

  @Field(() => Int, { nullable: true })
  intervalMs?: number | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

@InputType({ description: "Fields to change; the others stay as they are." })
export class UpdateSourceInput {
  @Field(() => String, { nullable: true })
  host?: string | null;

  @Field(() => Int, { nullable: true })
  port?: number | null;

  @Field(() => String, { nullable: true })
  filter?: string | null;

  @Field(() => [Int], { nullable: true })
  regions?: number[] | null;

  @Field(() => Int, { nullable: true })
  intervalMs?: number | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}
