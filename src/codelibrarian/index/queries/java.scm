; codelibrarian tags for Java.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration
  (modifiers) @_mods
  declarator: (variable_declarator name: (identifier) @name)
  (#match? @_mods "static")
  (#match? @_mods "final")) @definition.constant

(import_declaration (scoped_identifier) @import.spec)
(import_declaration (scoped_identifier) @import.wildcard (asterisk))

; references
(method_invocation name: (identifier) @reference.call)
(object_creation_expression type: (type_identifier) @reference.class)
(superclass (type_identifier) @reference.class)
(super_interfaces (type_list (type_identifier) @reference.interface))
(type_identifier) @reference.type
