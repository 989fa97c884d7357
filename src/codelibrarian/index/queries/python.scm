; codelibrarian tags for Python.
; @definition.<kind> marks the whole definition, @name its name;
; @reference.<kind> a use; @import.* the pieces of an import statement.

(class_definition name: (identifier) @name) @definition.class

(function_definition name: (identifier) @name) @definition.function

(module (expression_statement (assignment left: (identifier) @name) @definition.constant))
(module (assignment left: (identifier) @name) @definition.constant)

(call function: (identifier) @name) @reference.call
(call function: (attribute attribute: (identifier) @name)) @reference.call
(class_definition superclasses: (argument_list (identifier) @name)) @reference.class
(type (identifier) @name) @reference.type
(decorator (identifier) @name) @reference.call
(attribute
  object: (identifier) @_obj
  attribute: (identifier) @name
  (#not-any-of? @_obj "self" "cls")) @reference.attribute

(import_statement name: (dotted_name) @import.module)
(import_statement name: (aliased_import name: (dotted_name) @import.module))
(import_from_statement
  module_name: (_) @import.from
  name: [(dotted_name) @import.name (aliased_import name: (dotted_name) @import.name)])
(import_from_statement module_name: (_) @import.from (wildcard_import))
