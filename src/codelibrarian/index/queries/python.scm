; codelibrarian tags for Python.
; @definition.<kind> marks the whole definition, @name its name;
; @reference.<kind> a use; @import.* the pieces of an import statement.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(module (expression_statement (assignment left: (identifier) @name) @definition.constant))
(module (assignment left: (identifier) @name) @definition.constant)

(import_statement name: (dotted_name) @import.module)
(import_statement name: (aliased_import name: (dotted_name) @import.module))
(import_from_statement
  module_name: (_) @import.from
  name: [(dotted_name) @import.name (aliased_import name: (dotted_name) @import.name)])
(import_from_statement module_name: (_) @import.from (wildcard_import))

; references
(call function: (identifier) @reference.call)
(call function: (attribute attribute: (identifier) @reference.call))
(class_definition superclasses: (argument_list (identifier) @reference.class))
(type (identifier) @reference.type)
(decorator (identifier) @reference.call)
(attribute
  object: (identifier) @_obj
  attribute: (identifier) @reference.attribute
  (#not-any-of? @_obj "self" "cls"))
